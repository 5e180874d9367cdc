//! Step 2, engine and address: the engine named, else the one the
//! `--serve` command shows; the address from `--url`, the command or the engine's port;
//! the cards' facts for the manifest.

use analyzer::docs::manifest::{EngineFrom, EngineInEffect, Stage};
use analyzer::engine::engine_from_argv;
use analyzer::Engine;

use super::{address, problem, Run, Step};
use crate::{gpu, say};

impl Run {
    pub(super) fn set_engine(&mut self, engine: Engine, from: EngineFrom) {
        self.engine = Some(engine);
        self.manifest.engine = EngineInEffect {
            key: Some(engine),
            from: Some(from),
        };
    }

    /// Step 2.
    pub(super) fn engine_step(&mut self, serve_argv: Option<&[String]>) -> Step<()> {
        let from_serve = serve_argv.and_then(engine_from_argv);
        match (self.opts.engine, from_serve) {
            (Some((named, _)), Some(serve)) if named != serve => {
                return problem(
                    Stage::Engine,
                    format!(
                        "the engine named is {}, but the --serve command is {}'s",
                        named.display(),
                        serve.display()
                    ),
                )
            }
            (Some((named, by)), _) => {
                self.set_engine(named, by);
                say(&format!("== engine: {}", named.display()));
            }
            (None, Some(serve)) => {
                self.set_engine(serve, EngineFrom::ServeCommand);
                say(&format!(
                    "== engine: {} (from the --serve command)",
                    serve.display()
                ));
            }
            (None, None) => {}
        }
        self.manifest.url = match (&self.opts.url, serve_argv) {
            (Some(u), _) => u.trim_end_matches('/').to_string(),
            (None, Some(argv)) => address::from_serve(argv, self.engine),
            (None, None) => address::default_url(self.engine),
        };
        self.manifest.gpus = gpu::facts().unwrap_or_default();
        self.save_manifest();
        Ok(())
    }
}
