//! Batching (group commit), the TigerBeetle lesson on our database. Debits are spread
//! over a few streams by account (one stream on SQLite, whose writers take turns anyway). A
//! debit whose stream has nothing in flight goes straight through, on its caller's task, as
//! a transaction of its own: without contention batching adds no latency. So does, on
//! PostgreSQL, a debit whose stream is busy while no debit waits in any stream and its
//! account has no transaction in flight (at most one per stream at once,
//! [`Batched::PASSING_PER_STREAM`]); past that, a debit is batched: a small batch costs about what one
//! debit costs (the same two statements), so under load debits share transactions.
//! Those debits wait in their stream's queue and are applied together in its
//! next transaction ([`Store::debit_many`]), set-based as a batch ingest is: two
//! statements whatever the batch's size, each account's debits in arrival order, each
//! debit with its own buffer check, ledger entry, idempotency key and result (a debit
//! alone is a call of one through the same statements). A hot account's debits share
//! one lock, one write and one commit; many accounts' debits share one commit.
//!
//! Submits are batched the same way ([`SubmitBatcher`]), but pass a busy stream only
//! while no submit waits (a burst of submits batches, [`Batched::PASSING_PER_STREAM`]): a batch is applied by
//! [`Store::submit_many`], set-based, each submit exactly as a single submit; each carries
//! its caller's actor, since the batch runs on another task. The machinery is one
//! [`Batcher`], generic over what it batches ([`Batched`]).
//!
//! What queues behind a debit that went straight through is handed to a task of its own
//! when that debit ends or when its caller goes away (a client that hangs up), so no
//! debit is ever stranded. A batch that fails as a whole (a database error) is retried
//! debit by debit, so every caller gets its own answer.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};

use holdfast_core::{AccountId, Refusal};
use holdfast_store::model::Submitted;
use holdfast_store::{DebitRequest, Dialect, MoneyResult, QueuedSubmit, Store, StoreError};
use tokio::sync::oneshot;

/// How debits are batched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Most debits one transaction applies; 1 turns batching off (every debit is a
    /// transaction of its own, straight through).
    pub max_batch: usize,
    /// Commit streams on PostgreSQL: batch transactions in flight at once. Each stream's accounts
    /// are its own (by hash), so streams never wait for each other's locks. Fewer streams
    /// batch more; more streams keep a debit stuck behind a busy account's lock from
    /// holding up as many others. (SQLite has one: its writers take turns anyway.)
    pub postgres_streams: u64,
}

impl Default for BatchOptions {
    /// 64 debits, 2 streams: measured best on the bench machine (BENCHMARKS.md).
    fn default() -> Self {
        BatchOptions {
            max_batch: 64,
            postgres_streams: 2,
        }
    }
}

/// What a [`Batcher`] batches: a call on one account, applied alone (a transaction of
/// its own) or with others in one transaction, each answered as if alone.
pub trait Batched: Send + Sync + 'static {
    type Req: Clone + Send + Sync + 'static;
    type Answer: Send + 'static;

    /// On PostgreSQL, how many calls per stream may pass a busy stream at once (go
    /// straight through, a transaction of their own beside the stream's) rather than
    /// wait for its next batch: only while no call waits in any stream (light load; a
    /// burst of calls batches), and never beside a transaction of the call's own account
    /// (it would wait for the lock anyway, and batches with the account's other calls).
    const PASSING_PER_STREAM: usize;

    /// The call alone.
    fn one(
        store: &Store,
        account: &AccountId,
        req: &Self::Req,
    ) -> impl Future<Output = Result<Self::Answer, StoreError>> + Send;

    /// The calls in one transaction, answered in order; the outer error fails them all
    /// (nothing written).
    fn many(
        store: &Store,
        items: &[(AccountId, Self::Req)],
    ) -> impl Future<Output = Result<Vec<Result<Self::Answer, Refusal>>, StoreError>> + Send;
}

/// Debits: [`Store::debit_one`] alone, [`Store::debit_many`] together.
pub struct Debits;

impl Batched for Debits {
    type Req = DebitRequest;
    type Answer = MoneyResult;
    /// A call of one debit runs the same two statements as a batch (one debit path), so
    /// a small batch costs about what one debit costs, and batching where a stream is
    /// busy pays: at 16 clients over 1,000 accounts, 6 737 debits/s with one passer per
    /// stream, 4 648–4 672 with four, 3 512–3 794 passing while a connection is free
    /// (docs/bench-history.md, issue #43, "one debit path").
    const PASSING_PER_STREAM: usize = 1;

    async fn one(
        store: &Store,
        account: &AccountId,
        req: &DebitRequest,
    ) -> Result<MoneyResult, StoreError> {
        store.debit_one(account, req).await
    }

    async fn many(
        store: &Store,
        items: &[(AccountId, DebitRequest)],
    ) -> Result<Vec<Result<MoneyResult, Refusal>>, StoreError> {
        store.debit_many(items).await
    }
}

/// Submits: [`Store::submit`] alone (as its caller's actor), [`Store::submit_many`]
/// together.
pub struct Submits;

impl Batched for Submits {
    type Req = QueuedSubmit;
    type Answer = Submitted;
    /// A burst of submits (50 at once) is cheaper batched: passing while a connection
    /// was free (a policy since removed) the batched lifecycle fell from 5 663 to 4 446
    /// jobs/s while the single one stayed at 1 067–1 109 (docs/bench-history.md). Up to 8
    /// at once on 2 streams go straight through.
    const PASSING_PER_STREAM: usize = 4;

    async fn one(
        store: &Store,
        _: &AccountId,
        queued: &QueuedSubmit,
    ) -> Result<Submitted, StoreError> {
        holdfast_store::actor::acting_as(&queued.actor, store.submit(&queued.req)).await
    }

    async fn many(
        store: &Store,
        items: &[(AccountId, QueuedSubmit)],
    ) -> Result<Vec<Result<Submitted, Refusal>>, StoreError> {
        let queued: Vec<QueuedSubmit> = items.iter().map(|(_, q)| q.clone()).collect();
        store.submit_many(&queued).await
    }
}

type Answer<O> = Result<<O as Batched>::Answer, StoreError>;
/// The calls of a batch, each with its account.
type Items<O> = Vec<(AccountId, <O as Batched>::Req)>;
type Reply<O> = oneshot::Sender<Answer<O>>;

/// A call waiting in a stream.
struct Waiting<O: Batched> {
    account: AccountId,
    req: O::Req,
    reply: Reply<O>,
}

/// Per stream with a transaction in flight: the calls waiting for it to finish, and the
/// accounts that transaction writes; and the accounts of the calls passing busy streams.
struct Queues<O: Batched> {
    waiting: HashMap<u64, Vec<Waiting<O>>>,
    writing: HashMap<u64, Vec<AccountId>>,
    passing: Vec<AccountId>,
}

impl<O: Batched> Default for Queues<O> {
    fn default() -> Self {
        Queues {
            waiting: HashMap::new(),
            writing: HashMap::new(),
            passing: Vec::new(),
        }
    }
}

/// What a call does on arrival.
enum Turn<O: Batched> {
    /// Its stream had nothing in flight: straight through, and the stream is its own.
    Lead,
    /// Its stream is busy, its account is not, and [`Batched::PASSING_PER_STREAM`] lets it pass:
    /// straight through beside it, not waiting a transaction to be batched.
    Pass,
    /// Otherwise: into the stream's next batch.
    Wait(oneshot::Receiver<Answer<O>>),
}

/// Group commit of the calls `O` (see the module).
pub struct Batcher<O: Batched> {
    queues: Arc<Mutex<Queues<O>>>,
    opts: BatchOptions,
}

/// The debit batcher.
pub type DebitBatcher = Batcher<Debits>;
/// The submit batcher.
pub type SubmitBatcher = Batcher<Submits>;

impl<O: Batched> Clone for Batcher<O> {
    fn clone(&self) -> Self {
        Batcher {
            queues: self.queues.clone(),
            opts: self.opts,
        }
    }
}

impl<O: Batched> Default for Batcher<O> {
    fn default() -> Self {
        Batcher::new(BatchOptions::default())
    }
}

impl<O: Batched> Batcher<O> {
    pub fn new(opts: BatchOptions) -> Batcher<O> {
        Batcher {
            queues: Arc::default(),
            opts: BatchOptions {
                max_batch: opts.max_batch.max(1),
                postgres_streams: opts.postgres_streams.max(1),
            },
        }
    }

    fn stream_of(&self, store: &Store, account: &AccountId) -> u64 {
        match store.dialect() {
            Dialect::Sqlite => 0,
            Dialect::Postgres => {
                let mut h = DefaultHasher::new();
                account.as_str().hash(&mut h);
                h.finish() % self.opts.postgres_streams
            }
        }
    }
}

impl<O: Batched> Batcher<O> {
    /// Applies one call, batched with any others of its stream.
    pub async fn apply(&self, store: &Store, account: &AccountId, req: O::Req) -> Answer<O> {
        if self.opts.max_batch == 1 {
            return O::one(store, account, &req).await;
        }
        let stream = self.stream_of(store, account);
        let turn: Turn<O> = {
            let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
            let busy = q.waiting.contains_key(&stream);
            if !busy {
                q.waiting.insert(stream, Vec::new());
                q.writing.insert(stream, vec![account.clone()]);
                Turn::Lead
            } else if q.passing.len() < self.passing_limit(store)
                && q.waiting.values().all(Vec::is_empty)
                && !q.passing.contains(account)
                // Not beside a transaction of the same account: that one would wait for
                // the lock, and batch with it instead.
                && !q.writing.get(&stream).is_some_and(|w| w.contains(account))
            {
                q.passing.push(account.clone());
                Turn::Pass
            } else {
                // A transaction is in flight for this stream: wait for the next batch.
                let (reply, answer) = oneshot::channel();
                q.waiting.entry(stream).or_default().push(Waiting {
                    account: account.clone(),
                    req: req.clone(),
                    reply,
                });
                Turn::Wait(answer)
            }
        };
        match turn {
            Turn::Lead => {
                // Nothing in flight: straight through, on the caller's own task. What
                // queues behind it meanwhile is handed to a task of its own when it ends
                // (or when the caller goes away mid-flight).
                let _hand_over = HandOver {
                    batcher: self.clone(),
                    store: store.clone(),
                    stream,
                };
                O::one(store, account, &req).await
            }
            Turn::Pass => {
                let _passed = Passing(self.clone(), account.clone());
                O::one(store, account, &req).await
            }
            Turn::Wait(answer) => match answer.await {
                Ok(result) => result,
                // The batch task went away: answer this call on its own.
                Err(_) => O::one(store, account, &req).await,
            },
        }
    }

    /// How many calls may pass busy streams at once
    /// ([`Batched::PASSING_PER_STREAM`]); none on SQLite, whose writers queue at its
    /// write gate anyway.
    fn passing_limit(&self, store: &Store) -> usize {
        match store.dialect() {
            Dialect::Sqlite => 0,
            Dialect::Postgres => self.opts.postgres_streams as usize * O::PASSING_PER_STREAM,
        }
    }

    /// The next batch of `stream`, or `None` (and the stream freed) when nothing waits.
    fn next_batch(&self, stream: u64) -> Option<Vec<Waiting<O>>> {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let queue = q.waiting.entry(stream).or_default();
        // A debit whose caller went away (its request timed out, or the client hung up)
        // was answered without it: it is not applied behind the caller's back.
        queue.retain(|w| !w.reply.is_closed());
        if queue.is_empty() {
            q.waiting.remove(&stream);
            q.writing.remove(&stream);
            return None;
        }
        let take = queue.len().min(self.opts.max_batch);
        let batch: Vec<Waiting<O>> = queue.drain(..take).collect();
        let accounts = batch.iter().map(|w| w.account.clone()).collect();
        q.writing.insert(stream, accounts);
        Some(batch)
    }

    /// Frees a stream, dropping whatever waits in it (each waiting debit then answers
    /// itself).
    fn release(&self, stream: u64) {
        let mut q = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        q.waiting.remove(&stream);
        q.writing.remove(&stream);
    }

    /// Runs batches of `stream` until its queue is empty (which frees the stream).
    async fn drain(&self, store: Store, stream: u64, mut batch: Vec<Waiting<O>>) {
        let mut draining = Draining {
            batcher: self,
            stream,
            done: false,
        };
        loop {
            run_batch(&store, batch).await;
            match self.next_batch(stream) {
                Some(next) => batch = next,
                None => {
                    draining.done = true;
                    return;
                }
            }
        }
    }
}

/// Held while a stream's batches run on a task of their own: should a batch panic (or
/// the task be dropped), the stream is freed, so later calls are not queued behind a
/// task that is gone; what waited in it answers itself.
struct Draining<'a, O: Batched> {
    batcher: &'a Batcher<O>,
    stream: u64,
    done: bool,
}

impl<O: Batched> Drop for Draining<'_, O> {
    fn drop(&mut self) {
        if !self.done {
            self.batcher.release(self.stream);
        }
    }
}

/// Held by a debit passing a busy stream: when it ends (or its caller goes away), it no
/// longer counts as passing.
struct Passing<O: Batched>(Batcher<O>, AccountId);

impl<O: Batched> Drop for Passing<O> {
    fn drop(&mut self) {
        let mut q = self.0.queues.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = q.passing.iter().position(|a| a == &self.1) {
            q.passing.swap_remove(i);
        }
    }
}

/// Held by a debit that went straight through: when it ends, the debits that queued
/// behind it go to a task of their own.
struct HandOver<O: Batched> {
    batcher: Batcher<O>,
    store: Store,
    stream: u64,
}

impl<O: Batched> Drop for HandOver<O> {
    fn drop(&mut self) {
        let Some(batch) = self.batcher.next_batch(self.stream) else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let (batcher, store, stream) =
                    (self.batcher.clone(), self.store.clone(), self.stream);
                runtime.spawn(async move { batcher.drain(store, stream, batch).await });
            }
            // No runtime to run them on (shutting down): dropping their replies makes
            // each waiting debit answer itself.
            Err(_) => {
                drop(batch);
                self.batcher.release(self.stream);
            }
        }
    }
}

/// Applies a batch in one transaction ([`Batched::many`]: each account's calls in
/// arrival order). When the transaction fails as a whole, each call is answered on its own.
async fn run_batch<O: Batched>(store: &Store, batch: Vec<Waiting<O>>) {
    let (items, replies): (Items<O>, Vec<Reply<O>>) = batch
        .into_iter()
        .map(|w| ((w.account, w.req), w.reply))
        .unzip();
    match O::many(store, &items).await {
        Ok(results) => {
            for (reply, result) in replies.into_iter().zip(results) {
                let _ = reply.send(result.map_err(StoreError::Refused));
            }
        }
        // The database cannot be reached (pool or write turn timed out, connection lost):
        // trying each debit on its own would only make each wait again.
        Err(StoreError::Unavailable(cause)) => {
            for reply in replies {
                let _ = reply.send(Err(StoreError::Unavailable(cause.clone())));
            }
        }
        // Nor can it write (a full disk): each debit on its own would fail the same way.
        Err(StoreError::DiskFull(cause)) => {
            for reply in replies {
                let _ = reply.send(Err(StoreError::DiskFull(cause.clone())));
            }
        }
        Err(_) => {
            for ((account, req), reply) in items.iter().zip(replies) {
                let _ = reply.send(O::one(store, account, req).await);
            }
        }
    }
}
