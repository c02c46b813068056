//! Who caused a change. Every ledger entry, event and job transition (submit, lease,
//! end) records its actor: `key:<key id>` for an API key (`key:env` for the
//! environment's admin key; never the key itself), `cli:<OS user>` for the operator CLI,
//! `system:<pass>` for a scheduled pass, `integration:stripe` for a Stripe webhook, or
//! [`LIBRARY`] for a program that embeds the engine and names none.
//!
//! The caller names the actor for a piece of work with [`acting_as`]; the store reads it
//! ([`current`]) where it writes, in the same task. Work that another task carries out
//! (the debit batcher) carries its actor with it ([`crate::DebitRequest::actor`]).

use std::sync::Arc;

tokio::task_local! {
    static ACTOR: Arc<str>;
}

/// The actor of a write made outside any [`acting_as`].
pub const LIBRARY: &str = "library";

/// Runs `work` with `actor` as the actor of every change it makes.
pub async fn acting_as<F: Future>(actor: &str, work: F) -> F::Output {
    ACTOR.scope(Arc::from(actor), work).await
}

/// The actor of the work running now.
pub fn current() -> String {
    ACTOR
        .try_with(|a| a.to_string())
        .unwrap_or_else(|_| LIBRARY.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_actor_is_the_innermost_scope_and_library_outside() {
        assert_eq!(current(), LIBRARY);
        let seen = acting_as("cli:ada", async {
            let outer = current();
            let inner = acting_as("key:k1", async { current() }).await;
            (outer, inner, current())
        })
        .await;
        assert_eq!(seen, ("cli:ada".into(), "key:k1".into(), "cli:ada".into()));
        assert_eq!(current(), LIBRARY);
    }
}
