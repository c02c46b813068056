//! `holdfast export`: the books of a time range as CSV or JSON lines, to a file or stdout,
//! a page at a time (memory stays one page whatever the range), with a progress bar on a
//! terminal.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use holdfast::{LedgerFilter, MAX_PAGE};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::Opts;
use super::fmt::{emit, entry_json};
use super::parse::{self, Coded};
use crate::books::csv_chunk;

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// RFC 3339: entries written at or after this (default: the beginning).
    #[arg(long)]
    since: Option<String>,
    /// RFC 3339: entries written before this (default: now and on).
    #[arg(long)]
    until: Option<String>,
    /// Only this account's entries.
    #[arg(long)]
    account: Option<String>,
    /// Only entries of this kind (top_up, debit, capture, job_refund, …).
    #[arg(long)]
    kind: Option<String>,
    /// csv (a header row, then one row per entry) or jsonl (one JSON object per line).
    #[arg(long, default_value = "csv", value_parser = ["csv", "jsonl"])]
    format: String,
    /// Write here instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
    #[command(flatten)]
    opts: Opts,
}

fn filter(a: &ExportArgs) -> anyhow::Result<LedgerFilter> {
    Ok(LedgerFilter {
        since: a
            .since
            .as_deref()
            .map(|t| parse::time("--since", t))
            .transpose()?,
        until: a
            .until
            .as_deref()
            .map(|t| parse::time("--until", t))
            .transpose()?,
        account_id: a.account.as_deref().map(parse::account).transpose()?,
        kind: a.kind.clone(),
        after: None,
        limit: MAX_PAGE,
    })
}

fn bar(total: u64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(total);
    Some(
        match ProgressStyle::with_template("export {bar:30} {pos}/{len} entries [{elapsed}]") {
            Ok(style) => bar.with_style(style),
            Err(_) => bar,
        },
    )
}

pub async fn export(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let mut filter = filter(&a)?;
    let engine = a.opts.db.engine().await?;
    let total = engine.count_ledger_export(&filter).await.coded()?;
    let mut out: Box<dyn Write> = match &a.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let progress = bar(total);
    let csv = a.format == "csv";
    let mut written: u64 = 0;
    loop {
        let page = engine.export_ledger(&filter).await.coded()?;
        if csv {
            out.write_all(&csv_chunk(&page.items, written == 0)?)?;
        } else {
            for e in &page.items {
                serde_json::to_writer(&mut out, &entry_json(e))?;
                out.write_all(b"\n")?;
            }
        }
        written += page.items.len() as u64;
        if let Some(bar) = &progress {
            bar.set_position(written);
        }
        if (page.items.len() as i64) < filter.limit {
            break;
        }
        filter.after = page.next;
    }
    out.flush()?;
    drop(out);
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let to = a.output.as_ref().map(|p| p.display().to_string());
    let summary = json!({ "exported": written, "format": a.format, "output": to });
    if a.output.is_none() {
        // stdout carries the export itself; the summary goes to stderr.
        eprintln!("exported {written} entries");
        return Ok(ExitCode::SUCCESS);
    }
    emit(&a.opts, summary, || {
        format!("exported {written} entries to {}", to.unwrap_or_default())
    })
}
