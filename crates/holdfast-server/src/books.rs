//! The books as CSV, for `GET /v1/ledger` with `Accept: text/csv` and `holdfast export`:
//! one header row, then one row per ledger entry, money as a decimal string with its
//! micros beside it (allowance counts leave the micros empty), times RFC 3339 UTC.

use holdfast::{LedgerEntry, MONEY, Micros};

/// The header row's columns.
pub const CSV_COLUMNS: [&str; 11] = [
    "entry_id",
    "created_at",
    "account_id",
    "pocket",
    "kind",
    "delta",
    "delta_micros",
    "amount_after",
    "amount_after_micros",
    "ref",
    "actor",
];

/// A pocket amount as two CSV fields: the decimal (or the count) and the micros.
fn amount_fields(pocket: &str, value: i64) -> [String; 2] {
    if pocket == MONEY {
        [Micros(value).format(), value.to_string()]
    } else {
        [value.to_string(), String::new()]
    }
}

fn record(e: &LedgerEntry) -> [String; 11] {
    let [delta, delta_micros] = amount_fields(&e.pocket, e.delta);
    let [after, after_micros] = amount_fields(&e.pocket, e.amount_after);
    [
        e.entry_id.to_string(),
        crate::http::wire::rfc3339(e.created_at),
        e.account_id.clone(),
        e.pocket.clone(),
        e.kind.clone(),
        delta,
        delta_micros,
        after,
        after_micros,
        e.reference.clone().unwrap_or_default(),
        e.actor.clone().unwrap_or_default(),
    ]
}

/// CSV text of `entries`, led by the header row when `header` is true.
pub fn csv_chunk(entries: &[LedgerEntry], header: bool) -> std::io::Result<Vec<u8>> {
    let mut out = csv::Writer::from_writer(Vec::with_capacity(entries.len() * 128));
    if header {
        out.write_record(CSV_COLUMNS)?;
    }
    for e in entries {
        out.write_record(record(e))?;
    }
    out.into_inner().map_err(|e| e.into_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pocket: &str, delta: i64, reference: Option<&str>) -> LedgerEntry {
        LedgerEntry {
            entry_id: 7,
            account_id: "acme".into(),
            pocket: pocket.into(),
            delta,
            kind: "debit".into(),
            amount_after: 250_000,
            available_after: None,
            reference: reference.map(str::to_owned),
            created_at: 0,
            actor: Some("key:k1".into()),
        }
    }

    #[test]
    fn rows_carry_money_twice_and_quote_what_needs_it() {
        let text = csv_chunk(
            &[
                entry("money", -2_500_000, Some("run \"42\", retry")),
                entry("daily_images", 3, None),
            ],
            true,
        )
        .unwrap();
        let text = String::from_utf8(text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_COLUMNS.join(","));
        assert_eq!(
            lines[1],
            r#"7,1970-01-01T00:00:00Z,acme,money,debit,-2.50,-2500000,0.25,250000,"run ""42"", retry",key:k1"#
        );
        assert_eq!(
            lines[2],
            "7,1970-01-01T00:00:00Z,acme,daily_images,debit,3,,250000,,,key:k1"
        );
        assert_eq!(csv_chunk(&[], false).unwrap(), b"");
    }
}
