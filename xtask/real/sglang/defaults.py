"""Prints the declared defaults of SGLang's server settings, one `name = python literal` a
line, for analyzer/src/bootlog/sglang_defaults.txt (what `inferlint boot-facts` compares a
start's `server_args` with).

Only settings whose declared default is a plain value (a bool, a number, a string) are
listed: a setting whose default is None is decided at start-up, so its value in a log says
nothing about what the user changed.

Usage: target/real/sglang-venv/bin/python xtask/real/sglang/defaults.py > FILE
"""
import sglang
from sglang.srt.server_args import ServerArgs

names = ServerArgs.__struct_fields__
defaults = ServerArgs.__struct_defaults__
# The struct's defaults belong to its last fields, in order.
first_with_default = len(names) - len(defaults)

print(f"# SGLang {sglang.__version__}: declared defaults of server_args (xtask/real/sglang/defaults.py)")
for i, name in enumerate(names[first_with_default:]):
    value = defaults[i]
    if name.startswith("_") or value is None or type(value).__name__ == "Factory":
        continue
    if isinstance(value, (bool, int, float, str)):
        print(f"{name} = {value!r}")
