//! The audit: checks DESIGN.md's invariants over the whole database in one snapshot and
//! returns every violation (an empty list means the books balance).

use std::collections::BTreeMap;

use holdfast_core::MONEY;
use holdfast_core::decide::JobStatus;

use crate::args;
use crate::db::{Dialect, Sql, Tx};
use crate::error::StoreError;
use crate::in_read_tx;
use crate::jobs::{job_columns, job_from};
use crate::model::Violation;
use crate::store::Store;

fn v(invariant: u8, account: &str, job: Option<&str>, message: String) -> Violation {
    Violation {
        invariant,
        account_id: Some(account.to_owned()),
        job_id: job.map(str::to_owned),
        message,
    }
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
        in_read_tx!(self, |tx| async {
            if tx.dialect() == Dialect::Postgres {
                tx.execute(
                    Sql::both("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
                    args![],
                )
                .await?;
            }
            let mut out = Vec::new();
            let mut pockets = pocket_facts(tx).await?;
            check_jobs(tx, &mut pockets, &mut out).await?;
            for ((account, pocket), f) in &pockets {
                let stored = f.stored.unwrap_or(0);
                if stored != f.ledger_sum || f.last_after.is_some_and(|a| a != stored) {
                    out.push(v(1, account, None, format!(
                        "pocket {pocket}: stored {stored}, ledger sum {}, last amount_after {:?}",
                        f.ledger_sum, f.last_after
                    )));
                }
                if f.held != f.open_held || f.held < 0 {
                    out.push(v(
                        2,
                        account,
                        None,
                        format!(
                            "pocket {pocket}: held {} but open hold lines sum to {}",
                            f.held, f.open_held
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
    for r in tx
        .fetch_all(
            Sql::both("SELECT account_id, balance, held FROM accounts"),
            args![],
        )
        .await?
    {
        let f = pockets
            .entry((r.text("account_id")?, MONEY.to_owned()))
            .or_default();
        f.stored = Some(r.int("balance")?);
        f.held = r.int("held")?;
    }
    for r in tx
        .fetch_all(
            Sql::both("SELECT account_id, pocket, remaining, held FROM allowances"),
            args![],
        )
        .await?
    {
        let f = pockets
            .entry((r.text("account_id")?, r.text("pocket")?))
            .or_default();
        f.stored = Some(r.int("remaining")?);
        f.held = r.int("held")?;
    }
    let sums = tx
        .fetch_all(
            Sql::both(
                "SELECT l.account_id, l.pocket, s.total, l.amount_after FROM ledger l JOIN \
                 (SELECT account_id, pocket, CAST(SUM(delta) AS BIGINT) AS total, MAX(entry_id) AS last_id FROM ledger GROUP BY account_id, pocket) s \
                 ON l.entry_id = s.last_id",
            ),
            args![],
        )
        .await?;
    for r in sums {
        let f = pockets
            .entry((r.text("account_id")?, r.text("pocket")?))
            .or_default();
        f.ledger_sum = r.int("total")?;
        f.last_after = Some(r.int("amount_after")?);
    }
    Ok(pockets)
}

/// Invariants 2 (held = open hold lines), 5 (charged ≤ hold, once) and 6 (concurrency).
async fn check_jobs(
    tx: &mut Tx,
    pockets: &mut BTreeMap<(String, String), PocketFacts>,
    out: &mut Vec<Violation>,
) -> Result<(), StoreError> {
    let captures = tx
        .fetch_all(
            Sql::both(
                "SELECT account_id, ref, pocket, COUNT(*) AS n, CAST(SUM(-delta) AS BIGINT) AS total FROM ledger \
                 WHERE kind = 'capture' GROUP BY account_id, ref, pocket",
            ),
            args![],
        )
        .await?;
    let mut captured: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
    for r in captures {
        let job = r.opt_text("ref")?.unwrap_or_default();
        captured.insert((job, r.text("pocket")?), (r.int("n")?, r.int("total")?));
    }
    let rows = tx
        .fetch_all(
            Sql::both(concat!(
                "SELECT ",
                job_columns!(),
                ", limit_at_submit, open_at_submit FROM jobs"
            )),
            args![],
        )
        .await?;
    for r in rows {
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
            }
        }
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
                    format!("charged {} of {} but held {held}", c.amount, c.pocket),
                ));
            }
        }
        for h in &j.hold {
            let charged = j
                .charged
                .iter()
                .find(|c| c.pocket == h.pocket)
                .map_or(0, |c| c.amount);
            // Every charge has exactly one capture entry behind it, and no capture is
            // without its charge.
            let (n, total) = captured
                .remove(&(j.job_id.clone(), h.pocket.clone()))
                .unwrap_or((0, 0));
            if n == 0 && charged == 0 {
                continue;
            }
            if n != 1 || total != charged || total > h.amount {
                out.push(v(5, &j.account_id, Some(&j.job_id), format!(
                    "{n} capture entries of {} totalling {total}; job says charged {charged}, held {}", h.pocket, h.amount
                )));
            }
        }
    }
    for ((job, pocket), (n, _)) in captured {
        out.push(Violation {
            invariant: 5,
            account_id: None,
            job_id: Some(job),
            message: format!("{n} capture entries of {pocket} for no hold of a job"),
        });
    }
    Ok(())
}

/// Invariants 3 (debits within the buffer), 7 (idempotency) and 8 (counters).
async fn check_entries(tx: &mut Tx, out: &mut Vec<Violation>) -> Result<(), StoreError> {
    let bad_debits = tx
        .fetch_all(
            Sql::both(
                "SELECT account_id, entry_id, available_after, buffer FROM ledger \
                 WHERE kind = 'debit' AND (available_after IS NULL OR buffer IS NULL OR available_after < -buffer)",
            ),
            args![],
        )
        .await?;
    for r in bad_debits {
        out.push(v(
            3,
            &r.text("account_id")?,
            None,
            format!(
                "debit entry {} left available {:?} below -buffer {:?}",
                r.int("entry_id")?,
                r.opt_int("available_after")?,
                r.opt_int("buffer")?
            ),
        ));
    }
    let idem = tx
        .fetch_all(
            Sql::both(
                "SELECT i.account_id, i.key, i.operation, i.entry_id, l.account_id AS entry_account, l.kind AS entry_kind \
                 FROM idempotency i LEFT JOIN ledger l ON l.entry_id = i.entry_id WHERE i.entry_id IS NOT NULL",
            ),
            args![],
        )
        .await?;
    for r in idem {
        let account = r.text("account_id")?;
        let matches = r.opt_text("entry_account")?.as_deref() == Some(account.as_str())
            && r.opt_text("entry_kind")?.as_deref() == Some(r.text("operation")?.as_str());
        if !matches {
            out.push(v(
                7,
                &account,
                None,
                format!(
                    "idempotency key {:?} does not point at its own entry",
                    r.text("key")?
                ),
            ));
        }
    }
    let twice = tx
        .fetch_all(
            Sql::both(
                "SELECT l.account_id, l.entry_id FROM ledger l WHERE l.kind IN ('top_up', 'bonus', 'debit', 'refund') \
                 AND NOT EXISTS (SELECT 1 FROM idempotency i WHERE i.entry_id = l.entry_id)",
            ),
            args![],
        )
        .await?;
    for r in twice {
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
    let counters = tx
        .fetch_all(
            Sql::both(
                "SELECT a.account_id, a.total_credited, a.total_spent, \
                 COALESCE((SELECT CAST(SUM(delta) AS BIGINT) FROM ledger l WHERE l.account_id = a.account_id AND l.kind IN ('top_up', 'bonus')), 0) AS credited, \
                 COALESCE((SELECT CAST(SUM(-delta) AS BIGINT) FROM ledger l WHERE l.account_id = a.account_id AND l.pocket = 'money' \
                   AND l.kind IN ('debit', 'capture')), 0) AS spent FROM accounts a",
            ),
            args![],
        )
        .await?;
    for r in counters {
        let account = r.text("account_id")?;
        let (tc, c) = (r.int("total_credited")?, r.int("credited")?);
        let (ts, s) = (r.int("total_spent")?, r.int("spent")?);
        if tc != c || ts != s {
            out.push(v(
                8,
                &account,
                None,
                format!("total_credited {tc} vs ledger {c}; total_spent {ts} vs ledger {s}"),
            ));
        }
    }
    Ok(())
}

/// Invariant 1, as reconciliation relies on it: every reconcile checkpoint equals the sum
/// of its pocket's ledger up to the entry it names (else the next run would adjust by the
/// checkpoint's error).
async fn check_checkpoints(tx: &mut Tx, out: &mut Vec<Violation>) -> Result<(), StoreError> {
    let rows = tx
        .fetch_all(
            Sql::both(
                "SELECT c.account_id, c.pocket, c.last_entry_id, c.ledger_sum, \
                 COALESCE((SELECT CAST(SUM(l.delta) AS BIGINT) FROM ledger l WHERE l.account_id = c.account_id \
                 AND l.pocket = c.pocket AND l.entry_id <= c.last_entry_id), 0) AS actual \
                 FROM reconcile_checkpoints c",
            ),
            args![],
        )
        .await?;
    for r in rows {
        let (claimed, actual) = (r.int("ledger_sum")?, r.int("actual")?);
        if claimed != actual {
            out.push(v(
                1,
                &r.text("account_id")?,
                None,
                format!(
                    "reconcile checkpoint of pocket {} says the ledger sums to {claimed} up to entry {}, it sums to {actual}",
                    r.text("pocket")?,
                    r.int("last_entry_id")?
                ),
            ));
        }
    }
    Ok(())
}
