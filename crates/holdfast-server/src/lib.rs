//! holdfast-server: the HTTP API (`holdfast serve`) and the operator CLI over the engine.
//!
//! Owns: routing, auth, request shapes and error mapping (API.md), OpenAPI, metrics, the
//! CLI. Must never: write a balance or decide a billing question itself — every such
//! call goes through the engine.

pub mod books;
pub mod cli;
pub mod config;
pub mod console;
pub mod http;
pub mod keys_cli;
pub mod serve_lock;
