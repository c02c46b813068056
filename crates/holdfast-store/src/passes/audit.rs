//! The audit: checks DESIGN.md's invariants over the whole database in one snapshot and
//! returns every violation (an empty list means the books balance).

use std::collections::BTreeMap;

use holdfast_core::decide::{JobStatus, PocketAmount};
use holdfast_core::{MONEY, Micros, pocket_amount};

use crate::driver::db::Tx;
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::model::{Job, Violation};
use crate::reads::statement::jobs_pruned_before;
use crate::store::Store;
use crate::units::blocks::{blocks_of, lines_of, tally_held, tally_moves};
use crate::units::jobs::job_from;
use crate::{in_read_tx, params, statement};

static MONEY_POCKETS: Stmt = statement!(shared "audit_money_pockets");
static ALLOWANCE_POCKETS: Stmt = statement!(shared "audit_allowance_pockets");
static LEDGER_BY_POCKET: Stmt = statement!(shared "audit_ledger_by_pocket");
static CAPTURE_ENTRIES_BY_JOB: Stmt = statement!(shared "audit_capture_entries_by_job");
static JOB_REFUNDS_BY_JOB: Stmt = statement!(shared "audit_job_refunds_by_job");
static JOBS: Stmt = statement!(shared "audit_jobs");
static DEBITS_BELOW_BUFFER: Stmt = statement!(shared "audit_debits_below_buffer");
static IDEMPOTENCY_ENTRIES: Stmt = statement!(shared "audit_idempotency_entries");
static ENTRIES_WITHOUT_KEY: Stmt = statement!(shared "audit_entries_without_key");
static ACCOUNT_COUNTERS: Stmt = statement!(shared "audit_account_counters");
static RECONCILE_CHECKPOINTS: Stmt = statement!(shared "audit_reconcile_checkpoints");
static BLOCKS: Stmt = statement!(shared "audit_blocks");
static BLOCK_ENTRIES: Stmt = statement!(shared "audit_block_entries");
static LIVE_BLOCKS: Stmt = statement!(shared "audit_live_blocks");

fn v(invariant: u8, account: &str, job: Option<&str>, message: String) -> Violation {
    Violation {
        invariant,
        account_id: Some(account.to_owned()),
        job_id: job.map(str::to_owned),
        message,
    }
}

/// Money that may be missing (a column left null), as a message shows it.
fn optional_money(value: Option<i64>) -> String {
    value.map_or_else(|| "none".to_owned(), |m| Micros(m).format())
}

/// Per (account, pocket): the stored amount, `held`, the ledger sum and the last entry's
/// amount after.
#[derive(Default, Debug)]
struct PocketFacts {
    stored: Option<i64>,
    held: i64,
    ledger_sum: i64,
    last_after: Option<i64>,
    open_held: i64,
}

impl Store {
    /// Checks invariants 1–8 of DESIGN.md.
    pub async fn audit(&self) -> Result<Vec<Violation>, StoreError> {
        // One snapshot: `Pool::begin_read` opens it REPEATABLE READ on PostgreSQL.
        in_read_tx!(self, |tx| async {
            let mut out = Vec::new();
            let mut pockets = pocket_facts(tx).await?;
            let mut blocks_held = BTreeMap::new();
            check_jobs(tx, &mut pockets, &mut blocks_held, &mut out).await?;
            check_blocks(tx, blocks_held, &mut out).await?;
            for ((account, pocket), f) in &pockets {
                let stored = f.stored.unwrap_or(0);
                if stored != f.ledger_sum || f.last_after.is_some_and(|a| a != stored) {
                    let last = f
                        .last_after
                        .map_or_else(|| "none".into(), |a| pocket_amount(pocket, a));
                    out.push(v(1, account, None, format!(
                        "pocket {pocket}: stored {}, ledger sum {}, last entry's amount_after {last}",
                        pocket_amount(pocket, stored), pocket_amount(pocket, f.ledger_sum)
                    )));
                }
                if f.held != f.open_held || f.held < 0 {
                    out.push(v(
                        2,
                        account,
                        None,
                        format!(
                            "pocket {pocket}: held {} but open hold lines sum to {}",
                            pocket_amount(pocket, f.held),
                            pocket_amount(pocket, f.open_held)
                        ),
                    ));
                }
                if pocket != MONEY && stored < 0 {
                    out.push(v(
                        4,
                        account,
                        None,
                        format!("allowance {pocket} remaining {stored} < 0"),
                    ));
                }
            }
            check_entries(tx, &mut out).await?;
            check_checkpoints(tx, &mut out).await?;
            Ok(out)
        })
    }
}

async fn pocket_facts(tx: &mut Tx) -> Result<BTreeMap<(String, String), PocketFacts>, StoreError> {
    let mut pockets: BTreeMap<(String, String), PocketFacts> = BTreeMap::new();
    for r in tx.rows(&MONEY_POCKETS, params! {}).await? {
        let f = pockets
            .entry((r.text("account_id")?, MONEY.to_owned()))
            .or_default();
        f.stored = Some(r.int("balance")?);
        f.held = r.int("held")?;
    }
    for r in tx.rows(&ALLOWANCE_POCKETS, params! {}).await? {
        let f = pockets
            .entry((r.text("account_id")?, r.text("pocket")?))
            .or_default();
        f.stored = Some(r.int("remaining")?);
        f.held = r.int("held")?;
    }
    for r in tx.rows(&LEDGER_BY_POCKET, params! {}).await? {
        let f = pockets
            .entry((r.text("account_id")?, r.text("pocket")?))
            .or_default();
        f.ledger_sum = r.int("total")?;
        f.last_after = Some(r.int("amount_after")?);
    }
    Ok(pockets)
}

/// Per (job, pocket): how many capture entries the ledger has, what they took and when
/// the last was made.
type Captures = BTreeMap<(String, String), (i64, i64, i64)>;
/// Per (job, pocket): what the job_refund entries gave back and when the last was made.
type Refunds = BTreeMap<(String, String), (i64, i64)>;

/// Invariants 2 (held = open hold lines), 5 (charged ≤ hold, once) and 6 (concurrency),
/// over the jobs kept (a pruned job's entries are not orphans).
async fn check_jobs(
    tx: &mut Tx,
    pockets: &mut BTreeMap<(String, String), PocketFacts>,
    blocks_held: &mut BTreeMap<i64, i64>,
    out: &mut Vec<Violation>,
) -> Result<(), StoreError> {
    let mut captured = capture_entries(tx).await?;
    let mut refunds = refund_entries(tx).await?;
    let pruned_before = jobs_pruned_before(tx).await?;
    for r in tx.rows(&JOBS, params! {}).await? {
        let j = job_from(&r)?.job;
        let (limit, open) = (r.int("limit_at_submit")?, r.int("open_at_submit")?);
        if open > limit {
            out.push(v(
                6,
                &j.account_id,
                Some(&j.job_id),
                format!("{open} open jobs at submit, limit {limit}"),
            ));
        }
        if j.status.is_open() {
            for h in &j.hold {
                pockets
                    .entry((j.account_id.clone(), h.pocket.clone()))
                    .or_default()
                    .open_held += h.amount;
                tally_held(blocks_held, &h.blocks);
            }
        }
        check_charges(&j, out);
        check_captures(&j, &mut captured, out);
        check_refunds(&j, &mut refunds, out);
    }
    for ((job, pocket), (total, _)) in refunds
        .into_iter()
        .filter(|(_, (_, at))| *at >= pruned_before)
    {
        out.push(Violation {
            invariant: 5,
            account_id: None,
            job_id: Some(job),
            message: format!(
                "job_refund entries of {pocket} give back {} for no charge",
                pocket_amount(&pocket, total)
            ),
        });
    }
    for ((job, pocket), (n, ..)) in captured
        .into_iter()
        .filter(|(_, (.., at))| *at >= pruned_before)
    {
        out.push(Violation {
            invariant: 5,
            account_id: None,
            job_id: Some(job),
            message: format!("{n} capture entries of {pocket} for no hold of a job"),
        });
    }
    Ok(())
}

async fn capture_entries(tx: &mut Tx) -> Result<Captures, StoreError> {
    let mut captured = Captures::new();
    for r in tx.rows(&CAPTURE_ENTRIES_BY_JOB, params! {}).await? {
        let job = r.opt_text("ref")?.unwrap_or_default();
        let facts = (r.int("n")?, r.int("total")?, r.int("last_at")?);
        captured.insert((job, r.text("pocket")?), facts);
    }
    Ok(captured)
}

async fn refund_entries(tx: &mut Tx) -> Result<Refunds, StoreError> {
    let mut refunds = Refunds::new();
    for r in tx.rows(&JOB_REFUNDS_BY_JOB, params! {}).await? {
        let job = r.opt_text("ref")?.unwrap_or_default();
        refunds.insert(
            (job, r.text("pocket")?),
            (r.int("total")?, r.int("last_at")?),
        );
    }
    Ok(refunds)
}

/// Invariant 5 for refunds: what the job says it was refunded is what its job_refund
/// entries gave back, pocket by pocket, and never more than it was charged. Takes the
/// job's refunds out of `refunds`.
fn check_refunds(j: &Job, refunds: &mut Refunds, out: &mut Vec<Violation>) {
    let amount_of = |lines: &[PocketAmount], pocket: &str| {
        lines
            .iter()
            .filter(|l| l.pocket == pocket)
            .map(|l| l.amount)
            .sum::<i64>()
    };
    let mut pockets: Vec<&str> = j
        .charged
        .iter()
        .chain(&j.refunded)
        .map(|l| l.pocket.as_str())
        .collect();
    pockets.sort_unstable();
    pockets.dedup();
    for pocket in pockets {
        let entries = refunds
            .remove(&(j.job_id.clone(), pocket.to_owned()))
            .map_or(0, |(total, _)| total);
        let (says, charged) = (
            amount_of(&j.refunded, pocket),
            amount_of(&j.charged, pocket),
        );
        if entries != says || says > charged {
            out.push(v(
                5,
                &j.account_id,
                Some(&j.job_id),
                format!(
                    "{pocket}: refund entries give back {}, job says refunded {}, charged {}",
                    pocket_amount(pocket, entries),
                    pocket_amount(pocket, says),
                    pocket_amount(pocket, charged)
                ),
            ));
        }
    }
}

/// Invariant 5 on the job row: a job that ends uncharged was not charged, and no charge
/// exceeds the hold of its pocket.
fn check_charges(j: &Job, out: &mut Vec<Violation>) {
    let uncharged = matches!(j.status, JobStatus::Failed | JobStatus::Expired)
        || (j.status == JobStatus::Canceled && j.started_at.is_none())
        || j.status.is_open();
    if uncharged && !j.charged.is_empty() {
        out.push(v(
            5,
            &j.account_id,
            Some(&j.job_id),
            format!("{} job was charged", j.status.as_str()),
        ));
    }
    for c in &j.charged {
        let held = j
            .hold
            .iter()
            .find(|h| h.pocket == c.pocket)
            .map_or(0, |h| h.amount);
        if c.amount > held {
            out.push(v(
                5,
                &j.account_id,
                Some(&j.job_id),
                format!(
                    "charged {} of {} but held {}",
                    pocket_amount(&c.pocket, c.amount),
                    c.pocket,
                    pocket_amount(&c.pocket, held)
                ),
            ));
        }
    }
}

/// Invariant 5 against the ledger: every charge has exactly one capture entry behind it,
/// and no capture is without its charge. Takes the job's captures out of `captured`.
fn check_captures(j: &Job, captured: &mut Captures, out: &mut Vec<Violation>) {
    for h in &j.hold {
        let charged = j
            .charged
            .iter()
            .find(|c| c.pocket == h.pocket)
            .map_or(0, |c| c.amount);
        let (n, total, _) = captured
            .remove(&(j.job_id.clone(), h.pocket.clone()))
            .unwrap_or((0, 0, 0));
        if n == 0 && charged == 0 {
            continue;
        }
        if n != 1 || total != charged || total > h.amount {
            out.push(v(
                5,
                &j.account_id,
                Some(&j.job_id),
                format!(
                    "{n} capture entries of {} totalling {}; job says charged {}, held {}",
                    h.pocket,
                    pocket_amount(&h.pocket, total),
                    pocket_amount(&h.pocket, charged),
                    pocket_amount(&h.pocket, h.amount)
                ),
            ));
        }
    }
}

/// Invariant 10: each credit block's remaining is what its ledger entries moved (a
/// positive entry gives to the blocks it names, a negative one takes), every entry's
/// lines add up to its delta, a block's held is what the open holds reserved of it
/// (`held`, from the jobs), and 0 ≤ held ≤ remaining ≤ granted is not asked of
/// remaining (a job refund gives back at most what was taken).
async fn check_blocks(
    tx: &mut Tx,
    mut held: BTreeMap<i64, i64>,
    out: &mut Vec<Violation>,
) -> Result<(), StoreError> {
    let mut moved: BTreeMap<i64, i64> = BTreeMap::new();
    for r in tx.rows(&BLOCK_ENTRIES, params! {}).await? {
        let (entry, delta) = (r.int("entry_id")?, r.int("delta")?);
        let lines = lines_of(r.opt_text("blocks")?)?;
        let sum: i64 = lines.iter().map(|l| l.amount).sum();
        if sum != delta.abs() || lines.iter().any(|l| l.amount < 0) {
            let what = format!(
                "entry {entry} moves {} but its blocks {}",
                Micros(delta),
                Micros(sum)
            );
            out.push(v(10, &r.text("account_id")?, None, what));
        }
        tally_moves(&mut moved, delta, &lines);
    }
    let mut live: BTreeMap<String, Vec<[i64; 4]>> = BTreeMap::new();
    for r in tx.rows(&BLOCKS, params! {}).await? {
        let (block, account) = (r.int("block_id")?, r.text("account_id")?);
        let (remaining, stored_held) = (r.int("remaining")?, r.int("held")?);
        if remaining > 0 {
            let figures = [block, r.int("granted")?, remaining, stored_held];
            live.entry(account.clone()).or_default().push(figures);
        }
        let by_ledger = moved.remove(&block).unwrap_or(0);
        let by_jobs = held.remove(&block).unwrap_or(0);
        if remaining != by_ledger || stored_held != by_jobs || r.int("has_blocks")? != 1 {
            let what = format!(
                "block {block}: remaining {} (ledger {}), held {} (open holds {})",
                Micros(remaining),
                Micros(by_ledger),
                Micros(stored_held),
                Micros(by_jobs)
            );
            out.push(v(10, &account, None, what));
        }
    }
    for (block, amount) in moved.into_iter().chain(held).filter(|(_, a)| *a != 0) {
        let what = format!(
            "block {block} is not stored, yet entries or holds move {}",
            Micros(amount)
        );
        out.push(Violation {
            invariant: 10,
            account_id: None,
            job_id: None,
            message: what,
        });
    }
    check_live_blocks(tx, live, out).await
}

/// Invariant 10, the account's side: the live blocks its row keeps (what a lock reads)
/// are its blocks that hold money, figure for figure.
async fn check_live_blocks(
    tx: &mut Tx,
    mut live: BTreeMap<String, Vec<[i64; 4]>>,
    out: &mut Vec<Violation>,
) -> Result<(), StoreError> {
    for r in tx.rows(&LIVE_BLOCKS, params! {}).await? {
        let account = r.text("account_id")?;
        let kept = (r.opt_text("live_blocks")?).unwrap_or_else(|| "[]".to_owned());
        let mut row: Vec<[i64; 4]> = (blocks_of(&kept)?.iter())
            .map(|b| [b.id, b.granted, b.remaining, b.held])
            .collect();
        row.sort_unstable();
        let stored = live.remove(&account).unwrap_or_default();
        if row != stored {
            let what = format!("live blocks {kept} on the row, {stored:?} stored");
            out.push(v(10, &account, None, what));
        }
    }
    for (account, stored) in live {
        out.push(v(
            10,
            &account,
            None,
            format!("no live blocks on the row, {stored:?} stored"),
        ));
    }
    Ok(())
}

/// Invariants 3 (debits within the buffer), 7 (idempotency) and 8 (counters).
async fn check_entries(tx: &mut Tx, out: &mut Vec<Violation>) -> Result<(), StoreError> {
    check_debits(tx, out).await?;
    check_idempotency(tx, out).await?;
    check_counters(tx, out).await
}

/// Invariant 3: no debit left available money below -buffer.
async fn check_debits(tx: &mut Tx, out: &mut Vec<Violation>) -> Result<(), StoreError> {
    for r in tx.rows(&DEBITS_BELOW_BUFFER, params! {}).await? {
        out.push(v(
            3,
            &r.text("account_id")?,
            None,
            format!(
                "debit entry {} left available {} below -buffer {}",
                r.int("entry_id")?,
                optional_money(r.opt_int("available_after")?),
                optional_money(r.opt_int("buffer")?)
            ),
        ));
    }
    Ok(())
}

/// Invariant 7: a key is in one place (a money change's on its entry, a submit's in the
/// idempotency table), and every keyed entry has its key.
async fn check_idempotency(tx: &mut Tx, out: &mut Vec<Violation>) -> Result<(), StoreError> {
    for r in tx.rows(&IDEMPOTENCY_ENTRIES, params! {}).await? {
        out.push(v(
            7,
            &r.text("account_id")?,
            None,
            format!(
                "idempotency key `{}` ({}) is kept out of its place: a money change's key \
                 belongs on its ledger entry, and a key in one place only",
                r.text("key")?,
                r.text("operation")?
            ),
        ));
    }
    for r in tx.rows(&ENTRIES_WITHOUT_KEY, params! {}).await? {
        out.push(v(
            7,
            &r.text("account_id")?,
            None,
            format!(
                "entry {} was applied without its idempotency key",
                r.int("entry_id")?
            ),
        ));
    }
    Ok(())
}

/// Invariant 8: the account counters equal what the ledger says, and so does the
/// spending since each spending mark.
async fn check_counters(tx: &mut Tx, out: &mut Vec<Violation>) -> Result<(), StoreError> {
    for r in tx.rows(&ACCOUNT_COUNTERS, params! {}).await? {
        let account = r.text("account_id")?;
        for period in ["day", "month"] {
            // An unmarked period (no start) has no base to check.
            let Some(start) = r.opt_int(&format!("spend_{period}_start"))? else {
                continue;
            };
            let marked = r.int(&format!("{period}_marked"))?;
            let spent = r.int(&format!("{period}_spent"))?;
            if marked != spent {
                let what = format!(
                    "spent since its {period} began ({start}): {} by its marks, {} by the ledger",
                    Micros(marked),
                    Micros(spent)
                );
                out.push(v(8, &account, None, what));
            }
        }
        let (tc, c) = (r.int("total_credited")?, r.int("credited")?);
        let (ts, s) = (r.int("total_spent")?, r.int("spent")?);
        if tc != c || ts != s {
            out.push(v(
                8,
                &account,
                None,
                format!(
                    "total_credited {} vs ledger {}; total_spent {} vs ledger {}",
                    Micros(tc),
                    Micros(c),
                    Micros(ts),
                    Micros(s)
                ),
            ));
        }
    }
    Ok(())
}

/// Invariant 1, as reconciliation relies on it: every reconcile checkpoint equals the sum
/// of its pocket's ledger up to the entry it names (else the next run would adjust by the
/// checkpoint's error).
async fn check_checkpoints(tx: &mut Tx, out: &mut Vec<Violation>) -> Result<(), StoreError> {
    for r in tx.rows(&RECONCILE_CHECKPOINTS, params! {}).await? {
        let (claimed, actual) = (r.int("ledger_sum")?, r.int("actual")?);
        if claimed != actual {
            let pocket = r.text("pocket")?;
            let (claimed, actual) = (
                pocket_amount(&pocket, claimed),
                pocket_amount(&pocket, actual),
            );
            out.push(v(
                1,
                &r.text("account_id")?,
                None,
                format!(
                    "reconcile checkpoint of pocket {pocket} says the ledger sums to {claimed} up to entry {}, it sums to {actual}",
                    r.int("last_entry_id")?
                ),
            ));
        }
    }
    Ok(())
}
