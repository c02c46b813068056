//! The books as CSV, for `GET /v1/ledger` with `Accept: text/csv` and `holdfast export`:
//! one header row, then one row per ledger entry, money as a decimal string with its
//! micros beside it (allowance counts leave the micros empty), times RFC 3339 UTC. A
//! text cell a client wrote (a `job_ref`, an actor, an account id) that a spreadsheet
//! would run as a formula — it begins with `=`, `+`, `-`, `@`, a tab or a carriage
//! return — is written with a `'` before it, as OWASP advises against CSV injection;
//! the amounts, whose minus sign is theirs, are written as they are.

use holdfast::{LedgerEntry, MONEY, Micros};

use crate::http::wire::StatementBody;

/// The header row's columns.
pub const CSV_COLUMNS: [&str; 13] = [
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
    "meter",
    "seconds",
];

/// A pocket amount as two CSV fields: the decimal (or the count) and the micros.
fn amount_fields(pocket: &str, value: i64) -> [String; 2] {
    if pocket == MONEY {
        [Micros(value).format(), value.to_string()]
    } else {
        [value.to_string(), String::new()]
    }
}

/// A text cell as a spreadsheet will read it safely: one that would start a formula gets
/// a `'` before it (which spreadsheets show as text and do not run).
fn text_cell(text: &str) -> String {
    match text.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => format!("'{text}"),
        _ => text.to_owned(),
    }
}

fn record(e: &LedgerEntry) -> [String; 13] {
    let [delta, delta_micros] = amount_fields(&e.pocket, e.delta);
    let [after, after_micros] = amount_fields(&e.pocket, e.amount_after);
    [
        e.entry_id.to_string(),
        crate::http::wire::rfc3339(e.created_at),
        text_cell(&e.account_id),
        text_cell(&e.pocket),
        text_cell(&e.kind),
        delta,
        delta_micros,
        after,
        after_micros,
        text_cell(e.reference.as_deref().unwrap_or_default()),
        text_cell(e.actor.as_deref().unwrap_or_default()),
        text_cell(e.meter.as_deref().unwrap_or_default()),
        e.seconds.map(|s| s.to_string()).unwrap_or_default(),
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

/// A statement as CSV: a header row, then one row per figure — `opening`, each `change`
/// by kind, each `spending` by job kind, each `meter` (the only rows with `seconds`),
/// `closing`, `held_at_end` — so that the `opening` row plus the `change` rows is the
/// `closing` row.
pub fn statement_csv(s: &StatementBody) -> std::io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "section",
        "name",
        "entries",
        "amount",
        "amount_micros",
        "seconds",
    ];
    w.write_record(header)?;
    let count = |n: Option<i64>| n.map(|n| n.to_string()).unwrap_or_default();
    for f in figures(s) {
        let micros = f.micros.to_string();
        let name = text_cell(f.name);
        let (entries, seconds) = (count(f.entries), count(f.seconds));
        w.write_record([f.section, &name, &entries, f.amount, &micros, &seconds])?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

/// One row of a statement's CSV.
struct Figure<'s> {
    section: &'static str,
    name: &'s str,
    entries: Option<i64>,
    amount: &'s str,
    micros: i64,
    seconds: Option<i64>,
}

/// A statement's figures in the CSV's order.
fn figures(s: &StatementBody) -> Vec<Figure<'_>> {
    let total = |section, amount, micros| Figure {
        section,
        name: "",
        entries: None,
        amount,
        micros,
        seconds: None,
    };
    let line = |section, name, entries, amount, micros| Figure {
        section,
        name,
        entries: Some(entries),
        amount,
        micros,
        seconds: None,
    };
    let mut out = vec![total(
        "opening",
        &s.opening_balance,
        s.opening_balance_micros,
    )];
    for l in &s.changes {
        out.push(line(
            "change",
            &l.kind,
            l.entries,
            &l.amount,
            l.amount_micros,
        ));
    }
    for l in &s.spending_by_job_kind {
        let kind = l.job_kind.as_deref().unwrap_or_default();
        out.push(line(
            "spending",
            kind,
            l.entries,
            &l.amount,
            l.amount_micros,
        ));
    }
    for l in &s.spending_by_meter {
        let meter = l.meter.as_deref().unwrap_or_default();
        let seconds = Some(l.seconds);
        let figure = line("meter", meter, l.entries, &l.amount, l.amount_micros);
        out.push(Figure { seconds, ..figure });
    }
    out.push(total(
        "closing",
        &s.closing_balance,
        s.closing_balance_micros,
    ));
    out.push(total("held_at_end", &s.held_at_end, s.held_at_end_micros));
    out
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
            meter: None,
            seconds: None,
            blocks: Vec::new(),
        }
    }

    #[test]
    fn rows_carry_money_twice_and_quote_what_needs_it() {
        let metered = LedgerEntry {
            meter: Some("linux-small".into()),
            seconds: Some(30),
            ..entry("money", -2_500_000, Some("run \"42\", retry"))
        };
        let text = csv_chunk(&[metered, entry("daily_images", 3, None)], true).unwrap();
        let text = String::from_utf8(text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_COLUMNS.join(","));
        assert_eq!(
            lines[1],
            r#"7,1970-01-01T00:00:00Z,acme,money,debit,-2.50,-2500000,0.25,250000,"run ""42"", retry",key:k1,linux-small,30"#
        );
        assert_eq!(
            lines[2],
            "7,1970-01-01T00:00:00Z,acme,daily_images,debit,3,,250000,,,key:k1,,"
        );
        assert_eq!(csv_chunk(&[], false).unwrap(), b"");
    }

    #[test]
    fn a_text_cell_that_would_run_as_a_formula_is_written_as_text() {
        let formulas = [
            "=HYPERLINK(\"http://x\")",
            "+1+2",
            "-1+2",
            "@SUM(A1)",
            "\tx",
            "\rx",
        ];
        for formula in formulas {
            let text = csv_chunk(&[entry("money", -100, Some(formula))], false).unwrap();
            let mut reader = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(text.as_slice());
            let row = reader.records().next().unwrap().unwrap();
            assert_eq!(&row[9], format!("'{formula}"), "{formula:?}");
            // The amount keeps its minus sign: it is a number, not a client's text.
            assert_eq!((&row[5], &row[6]), ("-0.0001", "-100"));
        }
        let plain = csv_chunk(&[entry("money", 1, Some("run 42 = ok"))], false).unwrap();
        assert!(String::from_utf8(plain).unwrap().contains(",run 42 = ok,"));
    }
}
