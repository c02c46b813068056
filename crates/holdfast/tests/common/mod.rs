#![allow(dead_code)]

use holdfast::testing::{Backend, TestDb};
use holdfast::{
    AccountId, CreditKind, Engine, IdempotencyKey, Micros, PutAccount, RateCard, Store,
};

pub fn acct(s: &str) -> AccountId {
    AccountId::parse(s).unwrap()
}

pub fn key(s: &str) -> IdempotencyKey {
    IdempotencyKey::parse(s).unwrap()
}

pub fn usd(s: &str) -> Micros {
    Micros::parse(s).unwrap()
}

/// A fresh database with the given card, or None when PostgreSQL is unavailable locally.
pub async fn engine_with(backend: Backend, card: RateCard) -> Option<(TestDb, Engine)> {
    let db = TestDb::new(backend).await?;
    let store = db.store(card).await;
    Some((db, Engine::new(store)))
}

pub async fn engine(backend: Backend) -> Option<(TestDb, Engine)> {
    engine_with(backend, RateCard::builtin()).await
}

pub async fn put(store: &Store, id: &str, plan: &str) {
    store
        .put_account(
            &acct(id),
            &PutAccount {
                plan: plan.into(),
                plan_until: None,
                max_concurrent_jobs: None,
            },
        )
        .await
        .unwrap();
}

pub async fn top_up(store: &Store, id: &str, amount: &str, k: &str) {
    store
        .credit(&acct(id), usd(amount), CreditKind::TopUp, &key(k))
        .await
        .unwrap();
}

/// The audit must find nothing.
pub async fn assert_clean(store: &Store) {
    let violations = store.audit().await.unwrap();
    assert!(violations.is_empty(), "audit violations: {violations:#?}");
}

/// A rate card derived from the default by text replacement.
pub fn card_with(pairs: &[(&str, &str)]) -> RateCard {
    let mut text = holdfast::core::ratecard::DEFAULT_RATE_CARD.to_owned();
    for (from, to) in pairs {
        assert!(text.contains(from), "card has no {from:?}");
        text = text.replacen(from, to, 1);
    }
    RateCard::parse(&text).unwrap()
}

/// Events of one type, waiting (up to 10 s) until at least `at_least` are visible. On
/// PostgreSQL an event becomes visible to readers once every transaction older than it
/// has finished (see holdfast_store::events), and tests share one cluster.
pub async fn events_of(store: &Store, event_type: &str, at_least: usize) -> Vec<holdfast::Event> {
    let filter = holdfast::EventFilter {
        limit: 1000,
        event_type: Some(event_type.into()),
        ..Default::default()
    };
    for _ in 0..200 {
        let items = store.events(&filter).await.unwrap().items;
        if items.len() >= at_least {
            return items;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    store.events(&filter).await.unwrap().items
}
