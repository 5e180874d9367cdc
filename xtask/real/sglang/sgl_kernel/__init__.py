"""A stand-in for SGLang's CPU kernel package, written for inferlint's real-engine tier.

SGLang's CPU build of `sgl_kernel` is compiled from SGLang's own repository and is on no
package registry; with SGLANG_USE_CPU_ENGINE=1, SGLang 0.5.23 imports a few helpers from
it with no fallback. This module gives those helpers in plain torch, enough for a plain
(non-speculative) server on the CPU. It registers no `torch.ops.sgl_kernel` operators, so
SGLang finds no AMX support and every layer takes its native-torch path; the scheduler,
radix cache, tokenizer, HTTP server and metrics are SGLang's own.

`cargo xtask real --engine sglang` puts the folder holding this package first on
PYTHONPATH (see xtask/src/real.rs).
"""

import ctypes

import torch

__version__ = "0.0.0+inferlint"


def assign_req_to_token_pool_cpu(
    req_pool_indices, req_to_token, start_offset, end_offset, out_cache_loc, pool_len
):
    """Writes each request's new cache locations into its row of the request-to-token
    table: request i takes the next `end[i] - start[i]` entries of `out_cache_loc`, in
    request order, at columns `start[i]:end[i]` of row `req_pool_indices[i]`."""
    rows = req_pool_indices.tolist()
    starts = start_offset.tolist()
    ends = end_offset.tolist()
    taken = 0
    for row, start, end in zip(rows, starts, ends):
        if end > pool_len:
            raise ValueError(f"request row {row} would reach column {end} of {pool_len}")
        n = end - start
        if n <= 0:
            continue
        req_to_token[row, start:end] = out_cache_loc[taken : taken + n].to(req_to_token.dtype)
        taken += n


def _rows(base, stride, count):
    """`count` rows of `stride` bytes at the raw address `base`, as a uint8 tensor view."""
    raw = (ctypes.c_uint8 * (stride * count)).from_address(base)
    return torch.frombuffer(raw, dtype=torch.uint8).view(count, stride)


def copy_all_layer_kv_cache_cpu(data_ptrs, strides, tgt_loc, src_loc):
    """In every KV buffer (a base address and a row stride in bytes), copies row
    `src_loc[j]` to row `tgt_loc[j]`; all source rows are read before any is written."""
    if src_loc.numel() == 0:
        return
    src = src_loc.to(torch.long)
    tgt = tgt_loc.to(torch.long)
    count = int(max(src.max().item(), tgt.max().item())) + 1
    for base, stride in zip(data_ptrs.tolist(), strides.tolist()):
        view = _rows(int(base), int(stride), count)
        view[tgt] = view[src].clone()


def _not_provided(name):
    def missing(*_args, **_kwargs):
        raise NotImplementedError(
            f"sgl_kernel.{name} is not provided by inferlint's stand-in (speculative decoding "
            "needs SGLang's own CPU kernels)"
        )

    missing.__name__ = name
    return missing


# Speculative decoding's helpers: imported by name at start-up, never called by a plain run.
for _name in (
    "rotate_input_ids_cpu",
    "fill_accept_out_cache_loc_cpu",
    "fill_bonus_tokens_cpu",
    "assign_draft_cache_locs_contiguous_cpu",
    "assign_extend_cache_locs_cpu",
    "build_tree_kernel_efficient_cpu",
    "verify_tree_greedy_cpu",
):
    globals()[_name] = _not_provided(_name)
del _name
