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
