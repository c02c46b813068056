//! Output: RFC 3339 times, decimal money, the JSON shapes of API.md, aligned tables, and
//! the one place that chooses between human and `--json` output.

use holdfast::lines_json;
use std::process::ExitCode;

use holdfast::{AccountView, Event, Job, LedgerEntry, MONEY, MoneyResult, PocketAmount};
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;

use super::Opts;

/// Prints `json` with `--json`, else the human text; succeeds.
pub fn emit(opts: &Opts, json: Value, human: impl FnOnce() -> String) -> anyhow::Result<ExitCode> {
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!("{}", human());
    }
    Ok(ExitCode::SUCCESS)
}

/// RFC 3339 in UTC with all six decimals, so times line up and sort as text.
const RFC3339_MICROS: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

/// A database timestamp (micros since the epoch) as RFC 3339 UTC.
pub fn time(micros: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000)
        .ok()
        .and_then(|t| t.format(RFC3339_MICROS).ok())
        .unwrap_or_else(|| format!("<out of range: {micros}µs>"))
}

pub fn opt_time(micros: Option<i64>) -> Value {
    micros.map_or(Value::Null, |t| Value::String(time(t)))
}

/// Money as a decimal, as the API writes it.
pub use crate::http::wire::money;

/// A pocket's delta with its sign: `+10.00`, `-2.50` for money, `+5` for an allowance.
pub fn signed(pocket: &str, delta: i64) -> String {
    let amount = pocket_amount(pocket, delta);
    if delta >= 0 {
        format!("+{amount}")
    } else {
        amount
    }
}

/// An amount of a pocket: money as a decimal, an allowance as a count.
pub use holdfast::pocket_amount;

/// The one word an account listing shows ([`holdfast::AccountStatus::of`]).
pub fn account_status(a: &AccountView) -> &'static str {
    a.status().as_str()
}

pub fn account_json(a: &AccountView) -> Value {
    let allowances: serde_json::Map<String, Value> = a
        .allowances
        .iter()
        .map(|(name, p)| {
            let v = json!({
                "remaining": p.remaining, "held": p.held, "quota": p.quota,
                "cycle_started_at": time(p.cycle_started_at), "refills_at": opt_time(p.refills_at),
            });
            (name.clone(), v)
        })
        .collect();
    json!({
        "account_id": a.account_id, "plan": a.plan, "plan_until": opt_time(a.plan_until),
        "effective_plan": a.effective_plan,
        "balance": money(a.balance), "balance_micros": a.balance,
        "held": money(a.held), "held_micros": a.held,
        "available": money(a.available), "available_micros": a.available,
        "buffer": money(a.buffer), "buffer_micros": a.buffer,
        "total_credited": money(a.total_credited), "total_credited_micros": a.total_credited,
        "total_spent": money(a.total_spent), "total_spent_micros": a.total_spent,
        "suspended_at": opt_time(a.suspended_at), "blocked_at": opt_time(a.blocked_at),
        "banned_at": opt_time(a.banned_at), "currency": a.currency,
        "max_concurrent_jobs": a.max_concurrent_jobs, "open_jobs": a.open_jobs,
        "created_at": time(a.created_at), "last_active_at": opt_time(a.last_active_at),
        "recharge": a.recharge.map(crate::http::wire::RechargeBody::from),
        "spend": a.spend.clone().map(crate::http::wire::SpendBody::from),
        "allowances": allowances,
        "blocks": a.blocks.iter().cloned().map(crate::http::wire::BlockBody::from).collect::<Vec<_>>(),
    })
}

pub fn entry_json(e: &LedgerEntry) -> Value {
    let mut v = json!({
        "entry_id": e.entry_id, "account_id": e.account_id, "pocket": e.pocket,
        "delta": e.delta, "kind": e.kind, "amount_after": e.amount_after,
        "ref": e.reference, "created_at": time(e.created_at), "actor": e.actor,
    });
    if let (Some(meter), Some(seconds)) = (&e.meter, e.seconds) {
        v["meter"] = json!(meter);
        v["seconds"] = json!(seconds);
    }
    if !e.blocks.is_empty() {
        let lines = e
            .blocks
            .iter()
            .copied()
            .map(crate::http::wire::BlockLineBody::from);
        v["blocks"] = json!(lines.collect::<Vec<_>>());
    }
    if e.pocket == MONEY {
        v["delta"] = json!(money(e.delta));
        v["delta_micros"] = json!(e.delta);
        v["amount_after"] = json!(money(e.amount_after));
        v["amount_after_micros"] = json!(e.amount_after);
    }
    v
}

pub fn money_result_json(r: &MoneyResult) -> Value {
    json!({ "entry": entry_json(&r.entry), "account": account_json(&r.account), "replay": r.replay })
}

/// Hold or charge lines for a table cell: `daily_images 1, money 0.04`.
pub fn lines_text(lines: &[PocketAmount]) -> String {
    if lines.is_empty() {
        return "-".to_owned();
    }
    let parts: Vec<String> = lines
        .iter()
        .map(|l| format!("{} {}", l.pocket, pocket_amount(&l.pocket, l.amount)))
        .collect();
    parts.join(", ")
}

pub fn job_json(j: &Job) -> Value {
    json!({
        "job_id": j.job_id, "account_id": j.account_id, "kind": j.kind, "lane": j.lane,
        "status": j.status.as_str(), "payload": j.payload,
        "hold": lines_json(&j.hold), "charged": lines_json(&j.charged),
        "refunded": lines_json(&j.refunded),
        "created_at": time(j.created_at), "started_at": opt_time(j.started_at),
        "finished_at": opt_time(j.finished_at), "cancel_requested": j.cancel_requested,
        "failure_reason": j.failure_reason, "actors": j.actors, "currency": j.currency,
    })
}

pub fn event_json(e: &Event) -> Value {
    json!({
        "event_id": e.event_id, "type": e.event_type, "account_id": e.account_id,
        "job_id": e.job_id, "data": e.data, "created_at": time(e.created_at),
        "currency": e.currency, "actor": e.actor,
    })
}

/// Left-aligned columns, two spaces apart, the header first.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_owned()
    };
    let mut out = vec![line(header.to_vec())];
    out.extend(
        rows.iter()
            .map(|r| line(r.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(time(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(time(1_500_000), "1970-01-01T00:00:01.500000Z");
        assert_eq!(time(-1), "1969-12-31T23:59:59.999999Z");
    }

    #[test]
    fn tables_align() {
        let t = table(&["A", "BB"], &[vec!["xyz".into(), "1".into()]]);
        assert_eq!(t, "A    BB\nxyz  1");
    }
}
