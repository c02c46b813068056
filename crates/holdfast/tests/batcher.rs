//! The batcher's machinery (`holdfast::batch::Batcher`) on SQLite and PostgreSQL, with a
//! call of the test's own: a batch that panics frees its stream, so every call waiting in
//! it and every call after it is still answered; which calls pass a busy stream and which
//! are batched.

use std::time::Duration;

use holdfast::batch::{BatchOptions, Batched, Batcher};
use holdfast::testing::*;
use holdfast::{AccountId, Refusal, StoreError, backend_test};
use holdfast_store::Store;

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

/// A call that takes a while alone and says whether it was batched; three may pass a
/// busy stream.
struct Tagged;

impl Batched for Tagged {
    type Req = u32;
    /// The request, and whether it was applied in a batch.
    type Answer = (u32, bool);
    const PASSING_PER_STREAM: usize = 3;

    async fn one(_: &Store, _: &AccountId, req: &u32) -> Result<(u32, bool), StoreError> {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok((*req, false))
    }

    async fn many(
        _: &Store,
        items: &[(AccountId, u32)],
    ) -> Result<Vec<Result<(u32, bool), Refusal>>, StoreError> {
        Ok(items.iter().map(|(_, req)| Ok((*req, true))).collect())
    }
}

/// Calls on `accounts`, in that order, each while the first still runs, through a batcher
/// of one stream: which of them were batched (their indexes). Each call is polled once
/// before the next is made: that first poll decides its turn (lead, pass or wait) before
/// it awaits anything, and none ends (so none stops passing) until all are awaited.
async fn batched_of(store: &Store, accounts: &[String]) -> Vec<usize> {
    let one_stream = BatchOptions {
        max_batch: 64,
        postgres_streams: 1,
    };
    let batcher = Batcher::<Tagged>::new(one_stream);
    let ids: Vec<AccountId> = accounts.iter().map(|a| acct(a)).collect();
    let mut calls = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let mut call = Box::pin(batcher.apply(store, id, i as u32));
        assert!(
            futures::poll!(&mut call).is_pending(),
            "call {i} answered at once"
        );
        calls.push(call);
    }
    let mut batched = Vec::new();
    for (i, answer) in futures::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        let (req, in_batch) = answer.unwrap();
        assert_eq!(req, i as u32);
        if in_batch {
            batched.push(i);
        }
    }
    batched
}

backend_test!(
    calls_pass_a_busy_stream_only_while_nothing_waits,
    |b| async move {
        let Some((_db, e)) = engine(b).await else {
            return;
        };
        // u0 holds the stream and u1 passes it; the next call on u0 waits for u0's
        // transaction, and then u2 and u3 wait too, although three may pass: a call waits.
        let accounts: Vec<String> = ["u0", "u1", "u0", "u2", "u3"].map(String::from).to_vec();
        let want: Vec<usize> = match b {
            Backend::Sqlite => vec![1, 2, 3, 4],
            Backend::Postgres => vec![2, 3, 4],
        };
        assert_eq!(batched_of(e.store(), &accounts).await, want);
    }
);
