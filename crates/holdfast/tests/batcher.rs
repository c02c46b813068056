//! The batcher's machinery (`holdfast::batch::Batcher`) on SQLite and PostgreSQL, with a
//! call of the test's own: a batch that panics frees its stream, so every call waiting in
//! it and every call after it is still answered.

use std::time::Duration;

use holdfast::batch::{BatchOptions, Batched, Batcher};
use holdfast::testing::*;
use holdfast::{AccountId, Refusal, Store, StoreError, backend_test};

/// A call that takes a while alone and whose batches panic.
struct Panicky;

impl Batched for Panicky {
    type Req = u32;
    type Answer = u32;
    const PASSING_PER_STREAM: usize = 0;

    async fn one(_: &Store, _: &AccountId, req: &u32) -> Result<u32, StoreError> {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok(*req)
    }

    async fn many(
        _: &Store,
        items: &[(AccountId, u32)],
    ) -> Result<Vec<Result<u32, Refusal>>, StoreError> {
        panic!("a batch of {} panics", items.len());
    }
}

backend_test!(a_batch_that_panics_frees_its_stream, |b| async move {
    let Some((_db, e)) = engine(b).await else {
        return;
    };
    let batcher = Batcher::<Panicky>::new(BatchOptions::default());
    let store = e.store().clone();
    // The first call goes straight through and takes a while; three more queue behind it
    // on the same account (so the same stream), and their batch panics.
    let mut calls = Vec::new();
    for i in 0..4 {
        let (batcher, store) = (batcher.clone(), store.clone());
        calls.push(tokio::spawn(async move {
            batcher.apply(&store, &acct("u"), i).await
        }));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap(), i as u32);
    }
    // The stream is free again: the next call is answered, not queued for ever.
    let u = acct("u");
    let next = batcher.apply(&store, &u, 9);
    let answer = tokio::time::timeout(Duration::from_secs(10), next).await;
    assert_eq!(answer.expect("answered").unwrap(), 9);
});
