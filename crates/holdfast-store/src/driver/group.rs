//! Group commit on SQLite: several units of work share one transaction and one commit
//! (so one sync of the write-ahead log), and each is answered only after that commit
//! succeeded ("answered => synced", docs/DESIGN.md, "Unit of work").
//!
//! SQLite takes one writer at a time. This process's writers queue in order at the
//! [`WriteGate`] rather than each retrying `BEGIN IMMEDIATE` on a busy database. The
//! writer holding the gate owns the group's open transaction and runs its unit of work
//! inside `SAVEPOINT unit`:
//! - kept (`commit`): `RELEASE unit`. With writers queued behind it, and the group under
//!   its caps ([`MAX_GROUP_UNITS`], [`MAX_GROUP_WAIT`]), it leaves the transaction open for
//!   them, hands the gate on and waits for the group's answer. With nobody queued it
//!   commits at once: a lone writer pays two statements (SAVEPOINT, RELEASE), never a
//!   wait for company.
//! - dropped (`rollback`, an error, or the [`Unit`] dropped mid-way): `ROLLBACK TO unit`
//!   undoes that unit alone; the others still commit.
//!
//! Who commits: the last unit with nobody queued behind it, or else a closer task spawned
//! by the group's first kept unit, which queues at the gate behind the writers queued
//! then and commits the group if it is still open. So every kept unit gets its answer
//! even when the writers it waited for gave up or were cancelled.
//!
//! A commit that fails fails every unit of the group (none was answered: each is retried
//! under its key). SQLite may roll a whole transaction back by itself on an error
//! (SQLITE_FULL, IOERR, BUSY, NOMEM): then the unit's savepoint is gone, so `RELEASE
//! unit` or `ROLLBACK TO unit` fails, and the group fails with it. The steps that change
//! the group's state (release, roll back, commit) run on a task of their own, so a caller
//! that goes away (a client that hangs up) cannot leave a group half-decided; a unit
//! dropped while running its statements is rolled back to its savepoint by whoever takes
//! the gate next (`Drop` cannot wait for the database), or, alone in its group, by
//! sqlx's rollback of the dropped transaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sqlx::{Sqlite, SqliteConnection, SqlitePool, Transaction};
use tokio::sync::{Mutex, OwnedMutexGuard, watch};

use crate::error::StoreError;

/// Most units one commit answers.
pub const MAX_GROUP_UNITS: usize = 64;
/// Longest the first kept unit of a group waits for company before the group commits.
pub const MAX_GROUP_WAIT: Duration = Duration::from_millis(20);

/// A group's answer: unknown, committed, or failed (why).
type Answer = Option<Result<(), Failure>>;

/// Why a group ended without committing, as each unit that waited for it is told. A full
/// disk stays a full disk: its client is told to free space, not only to retry.
#[derive(Clone, Debug)]
struct Failure {
    disk_full: bool,
    why: String,
}

impl Failure {
    fn of(e: &StoreError) -> Failure {
        Failure {
            disk_full: matches!(e, StoreError::DiskFull(_)),
            why: e.to_string(),
        }
    }

    fn because(why: &str) -> Failure {
        Failure {
            disk_full: false,
            why: why.to_owned(),
        }
    }

    fn into_error(self) -> StoreError {
        let why = format!("the group commit holding this write failed: {}", self.why);
        if self.disk_full {
            StoreError::DiskFull(why)
        } else {
            StoreError::Unavailable(why)
        }
    }
}

/// This process's turn to write on SQLite, and the open group it writes into.
#[derive(Clone)]
pub struct WriteGate {
    group: Arc<Mutex<Group>>,
    /// Writers queued for the gate (the closer task is not counted: it is no company).
    queued: Arc<AtomicUsize>,
    /// The longest a writer waits for its turn, or a kept unit for its group's answer.
    wait: Duration,
    /// Groups committed since the pool opened.
    commits: Arc<AtomicU64>,
}

impl std::fmt::Debug for WriteGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteGate")
            .field("queued", &self.queued())
            .field("wait", &self.wait)
            .finish()
    }
}

/// The open group, owned by whoever holds the gate.
struct Group {
    tx: Option<Transaction<'static, Sqlite>>,
    /// Counts the groups ended, so a closer knows whether its group is still open.
    generation: u64,
    /// Units released into the open transaction and waiting for its commit.
    kept: usize,
    first_kept: Option<Instant>,
    /// A unit's savepoint is open: begun, not yet released or rolled back.
    unit_open: bool,
    answer: watch::Sender<Answer>,
    commits: Arc<AtomicU64>,
}

/// Counts a writer as queued while it waits for the gate (and no longer if it goes away).
struct Queued<'a>(&'a AtomicUsize);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl WriteGate {
    pub(crate) fn new(wait: Duration) -> WriteGate {
        let commits = Arc::new(AtomicU64::new(0));
        let group = Group {
            tx: None,
            generation: 0,
            kept: 0,
            first_kept: None,
            unit_open: false,
            answer: watch::channel(None).0,
            commits: commits.clone(),
        };
        WriteGate {
            group: Arc::new(Mutex::new(group)),
            queued: Arc::default(),
            wait,
            commits,
        }
    }

    /// Groups committed since the pool opened (each one commit, one sync under FULL).
    pub fn commits(&self) -> u64 {
        self.commits.load(Ordering::Acquire)
    }

    /// Writers waiting for their turn now.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// Begins a unit of work: this process's turn (waited for at most `wait`), the group's
    /// transaction (`BEGIN IMMEDIATE` if none is open), and the unit's savepoint.
    pub(crate) async fn begin(&self, pool: &SqlitePool) -> Result<Unit, StoreError> {
        let mut group = self.turn().await?;
        group.settle_dropped_unit().await;
        if group.tx.is_none() {
            let tx = pool.begin_with("BEGIN IMMEDIATE").await;
            group.tx = Some(tx.map_err(busy_is_unavailable)?);
        }
        // Open before the statement runs: a caller that goes away meanwhile leaves a unit
        // that the next holder of the gate rolls back (or that fails the group).
        group.unit_open = true;
        let mut unit = Unit {
            group: Some(group),
            gate: self.clone(),
        };
        let begun = match unit.group.as_mut() {
            Some(group) => group.exec("SAVEPOINT unit").await,
            None => Err(lost()),
        };
        if let Err(e) = begun {
            if let Some(mut group) = unit.group.take() {
                group.fail(&e).await;
            }
            return Err(e);
        }
        Ok(unit)
    }

    async fn turn(&self) -> Result<OwnedMutexGuard<Group>, StoreError> {
        self.queued.fetch_add(1, Ordering::AcqRel);
        let _queued = Queued(&self.queued);
        let turn = self.group.clone().lock_owned();
        tokio::time::timeout(self.wait, turn).await.map_err(|_| {
            StoreError::Unavailable(format!(
                "no turn to write within {} ms: the writer ahead is stuck",
                self.wait.as_millis()
            ))
        })
    }

    /// Whether the group may stay open for the writers queued behind its holder: under
    /// its caps on units kept and on its first kept unit's wait.
    fn company_for(&self, group: &Group) -> bool {
        let young = group
            .first_kept
            .is_none_or(|first| first.elapsed() < MAX_GROUP_WAIT);
        self.queued() > 0 && group.kept < MAX_GROUP_UNITS && young
    }
}

/// `BEGIN IMMEDIATE` that found the file locked for the whole busy timeout: another
/// connection holds the write lock. Not worth retrying at once (each try would wait the
/// busy timeout again): the database is unavailable for writes now.
fn busy_is_unavailable(e: sqlx::Error) -> StoreError {
    match &e {
        sqlx::Error::Database(db) if db.code().as_deref() == Some("5") => StoreError::Unavailable(
            format!("the SQLite file stayed locked by another connection: {e}"),
        ),
        _ => StoreError::from(e),
    }
}

impl Group {
    async fn exec(&mut self, statement: &'static str) -> Result<(), StoreError> {
        let tx = self.tx.as_mut().ok_or_else(lost)?;
        sqlx::query(statement).execute(&mut **tx).await?;
        Ok(())
    }

    /// Undoes the open unit alone; a savepoint that is gone (SQLite rolled the whole
    /// transaction back) fails the group.
    async fn undo_unit(&mut self) -> Result<(), StoreError> {
        let undone = match self.exec("ROLLBACK TO unit").await {
            Ok(()) => self.exec("RELEASE unit").await,
            Err(e) => Err(e),
        };
        // Still open until undone: cancelled half-way, the next holder tries again.
        self.unit_open = false;
        if let Err(e) = &undone {
            self.fail(e).await;
        }
        undone
    }

    /// A unit dropped while it ran (its caller went away): rolled back alone now.
    async fn settle_dropped_unit(&mut self) {
        if self.unit_open {
            let _ = self.undo_unit().await;
        }
    }

    /// Commits the group and answers every kept unit.
    async fn commit(&mut self) -> Result<(), StoreError> {
        let Some(tx) = self.tx.take() else {
            let e = lost();
            self.end(Err(Failure::of(&e)));
            return Err(e);
        };
        match tx.commit().await {
            Ok(()) => {
                self.commits.fetch_add(1, Ordering::AcqRel);
                self.end(Ok(()));
                Ok(())
            }
            Err(e) => {
                let e = StoreError::from(e);
                self.end(Err(Failure::of(&e)));
                Err(e)
            }
        }
    }

    /// Rolls the whole group back; every kept unit is answered with the failure.
    async fn fail(&mut self, why: &StoreError) {
        if let Some(tx) = self.tx.take() {
            let _ = tx.rollback().await;
        }
        self.end(Err(Failure::of(why)));
    }

    /// Rolls back a group that keeps no unit (nobody waits for its answer).
    async fn discard(&mut self) {
        debug_assert_eq!(self.kept, 0);
        if let Some(tx) = self.tx.take() {
            let _ = tx.rollback().await;
        }
        self.end(Err(Failure::because("rolled back")));
    }

    /// Ends the group (its transaction is gone already) with its answer.
    fn end(&mut self, answer: Result<(), Failure>) {
        self.answer.send_replace(Some(answer));
        self.answer = watch::channel(None).0;
        self.generation += 1;
        self.kept = 0;
        self.first_kept = None;
        self.unit_open = false;
    }
}

/// A transaction's connection that is no longer there: a bug, or a group that failed.
fn lost() -> StoreError {
    StoreError::Unavailable("the group's SQLite transaction ended before this unit".into())
}

/// One unit of work in the open group, holding this process's turn to write.
pub struct Unit {
    group: Option<OwnedMutexGuard<Group>>,
    gate: WriteGate,
}

impl Unit {
    pub(crate) fn conn(&mut self) -> Result<&mut SqliteConnection, StoreError> {
        let group = self.group.as_mut().ok_or_else(lost)?;
        let tx = group.tx.as_mut().ok_or_else(lost)?;
        Ok(&mut **tx)
    }

    /// Keeps the unit's writes; returns once the group holding them has committed.
    pub(crate) async fn commit(mut self) -> Result<(), StoreError> {
        let group = self.group.take().ok_or_else(lost)?;
        let gate = self.gate.clone();
        let waiting = tokio::spawn(keep(group, gate.clone()))
            .await
            .map_err(|e| StoreError::Unavailable(format!("the commit task failed: {e}")))??;
        match waiting {
            None => Ok(()),
            Some(answer) => answered(answer, gate.wait).await,
        }
    }

    /// Undoes the unit's writes alone; the group's other units are not touched.
    pub(crate) async fn rollback(mut self) -> Result<(), StoreError> {
        let group = self.group.take().ok_or_else(lost)?;
        tokio::spawn(undo(group, self.gate.clone()))
            .await
            .map_err(|e| StoreError::Unavailable(format!("the rollback task failed: {e}")))?
    }
}

impl Drop for Unit {
    fn drop(&mut self) {
        let Some(group) = self.group.as_mut() else {
            return;
        };
        // Alone in its group: dropping the transaction makes sqlx roll it back before the
        // connection is used again. Otherwise the unit's savepoint stays open for the next
        // holder of the gate (the group's closer at the latest) to roll back.
        if group.unit_open && group.kept == 0 {
            group.tx = None;
            group.end(Err(Failure::because("dropped")));
        }
    }
}

/// Releases the unit into the group, then commits the group or leaves it open for the
/// writers queued behind (returning where its answer will come).
async fn keep(
    mut group: OwnedMutexGuard<Group>,
    gate: WriteGate,
) -> Result<Option<watch::Receiver<Answer>>, StoreError> {
    group.unit_open = false;
    if let Err(e) = group.exec("RELEASE unit").await {
        group.fail(&e).await;
        return Err(e);
    }
    group.kept += 1;
    if group.kept == 1 {
        group.first_kept = Some(Instant::now());
    }
    if gate.company_for(&group) {
        if group.kept == 1 {
            tokio::spawn(close_later(gate.group.clone(), group.generation));
        }
        return Ok(Some(group.answer.subscribe()));
    }
    group.commit().await.map(|()| None)
}

/// Rolls the unit back to its savepoint; ends the group if it keeps nothing, or commits it
/// for the kept units when nobody else is queued.
async fn undo(mut group: OwnedMutexGuard<Group>, gate: WriteGate) -> Result<(), StoreError> {
    if group.kept == 0 {
        group.discard().await;
        return Ok(());
    }
    group.undo_unit().await?;
    if gate.company_for(&group) {
        return Ok(());
    }
    group.commit().await
}

/// The group's closer: once the writers queued before it have had their turn, commits the
/// group if it is still open.
async fn close_later(group: Arc<Mutex<Group>>, generation: u64) {
    let mut group = group.lock_owned().await;
    if group.generation != generation {
        return;
    }
    group.settle_dropped_unit().await;
    if group.generation == generation {
        let _ = group.commit().await;
    }
}

/// Waits (at most `wait`) for the group's answer.
async fn answered(mut answer: watch::Receiver<Answer>, wait: Duration) -> Result<(), StoreError> {
    let outcome = match tokio::time::timeout(wait, answer.wait_for(Option::is_some)).await {
        Ok(Ok(outcome)) => outcome.clone(),
        Ok(Err(_)) => Some(Err(Failure::because("the group ended without an answer"))),
        Err(_) => Some(Err(Failure::because(&format!(
            "no commit within {} ms",
            wait.as_millis()
        )))),
    };
    match outcome {
        Some(Ok(())) => Ok(()),
        Some(Err(failure)) => Err(failure.into_error()),
        None => Err(lost()),
    }
}
