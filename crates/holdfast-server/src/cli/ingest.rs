//! `holdfast ingest FILE.jsonl`: one debit per line, in the item shape of `POST
//! /v1/debits`, applied in batches through `Engine::debit_many`. Refused lines are
//! written, as they were, to a file that can be ingested again; a run stopped half-way
//! (a database error, Ctrl-C) is resumed by running it again: applied lines are replays.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use holdfast::{AccountId, DebitRequest, Engine};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::Opts;
use super::fmt::emit;
use super::parse::Coded;
use crate::http::error::ApiError;
use crate::http::ingest::{MAX_DEBITS, parse_item};

#[derive(clap::Args, Debug)]
pub struct IngestArgs {
    /// A file of debits, one JSON object per line: {"account_id", "amount" or "usage",
    /// "idempotency_key", "job_ref"?}. Blank lines are skipped.
    file: PathBuf,
    /// Debits per transaction (1 to 1000).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u64).range(1..=MAX_DEBITS as u64))]
    batch: u64,
    /// Where refused lines go, as they were (default: FILE with `.refused` before its
    /// extension). Written only when a line is refused.
    #[arg(long)]
    refused: Option<PathBuf>,
    #[command(flatten)]
    opts: Opts,
}

/// What a run did, line by line.
#[derive(Default)]
struct Tally {
    lines: u64,
    applied: u64,
    replayed: u64,
    refused: BTreeMap<&'static str, u64>,
}

/// Refused lines, written as they came; the file is created at the first one.
struct Refused {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    shown: usize,
}

impl Refused {
    fn line(&mut self, n: u64, text: &str, code: &'static str, why: &str) -> anyhow::Result<()> {
        if self.shown < 5 {
            eprintln!("ingest: line {n}: {code}: {why}");
            self.shown += 1;
        }
        if self.out.is_none() {
            let file = File::create(&self.path)
                .with_context(|| format!("creating {}", self.path.display()))?;
            self.out = Some(BufWriter::new(file));
        }
        if let Some(out) = self.out.as_mut() {
            writeln!(out, "{text}")?;
        }
        Ok(())
    }

    fn close(mut self) -> anyhow::Result<Option<PathBuf>> {
        match self.out.take() {
            Some(mut out) => {
                out.flush()?;
                Ok(Some(self.path))
            }
            None => Ok(None),
        }
    }
}

/// The default file for refused lines: `usage.jsonl` → `usage.refused.jsonl`.
fn refused_path(file: &Path) -> PathBuf {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let name = match file.extension() {
        Some(ext) => format!("{stem}.refused.{}", ext.to_string_lossy()),
        None => format!("{stem}.refused"),
    };
    file.with_file_name(name)
}

/// A line waiting in the batch: its number and text, for a refusal, and the reason it
/// was refused already when it could not be read as a debit. Refused lines are written
/// when their batch is applied, so the refused file keeps the input's order.
struct Line {
    n: u64,
    text: String,
    malformed: Option<ApiError>,
}

pub async fn ingest(a: IngestArgs) -> anyhow::Result<ExitCode> {
    let file = File::open(&a.file).with_context(|| format!("opening {}", a.file.display()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let engine = a.opts.db.engine().await?;
    let mut refused = Refused {
        path: a.refused.clone().unwrap_or_else(|| refused_path(&a.file)),
        out: None,
        shown: 0,
    };
    let progress = progress(size);
    let mut tally = Tally::default();
    let (mut lines, mut items) = (Vec::new(), Vec::new());
    let mut read = 0;
    for (i, text) in BufReader::new(file).lines().enumerate() {
        let text = text.with_context(|| format!("reading {}", a.file.display()))?;
        read += text.len() as u64 + 1;
        if text.trim().is_empty() {
            continue;
        }
        tally.lines += 1;
        let n = i as u64 + 1;
        let parsed = serde_json::from_str(&text)
            .map_err(|e| ApiError::invalid(format!("malformed JSON: {e}")))
            .and_then(|value| parse_item(&format!("line {n}"), value));
        let malformed = parsed.map(|item| items.push(item)).err();
        lines.push(Line { n, text, malformed });
        if lines.len() as u64 >= a.batch {
            apply(&engine, &mut items, &mut lines, &mut tally, &mut refused).await?;
            progress.at(read, &tally);
        }
    }
    apply(&engine, &mut items, &mut lines, &mut tally, &mut refused).await?;
    progress.finish();
    let refused_file = refused.close()?;
    summary(&a.opts, &tally, refused_file)
}

impl Tally {
    fn refused_as(&mut self, code: &'static str) {
        *self.refused.entry(code).or_default() += 1;
    }

    fn refused_total(&self) -> u64 {
        self.refused.values().sum()
    }
}

/// Applies the waiting batch and empties it.
async fn apply(
    engine: &Engine,
    items: &mut Vec<(AccountId, DebitRequest)>,
    lines: &mut Vec<Line>,
    tally: &mut Tally,
    refused: &mut Refused,
) -> anyhow::Result<()> {
    let mut results = match items.is_empty() {
        true => Vec::new(),
        false => engine.debit_many(items).await.coded()?,
    }
    .into_iter();
    for line in lines.drain(..) {
        let result = match line.malformed {
            Some(e) => Err((e.code(), e.to_string())),
            None => results
                .next()
                .context("a batch answered fewer debits than it took")?
                .map_err(|r| (r.code(), r.to_string())),
        };
        match result {
            Ok(m) if m.replay => tally.replayed += 1,
            Ok(_) => tally.applied += 1,
            Err((code, why)) => {
                tally.refused_as(code);
                refused.line(line.n, &line.text, code, &why)?;
            }
        }
    }
    items.clear();
    Ok(())
}

fn summary(opts: &Opts, t: &Tally, refused_file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let file = refused_file.as_ref().map(|p| p.display().to_string());
    let json = json!({
        "lines": t.lines,
        "applied": t.applied,
        "replayed": t.replayed,
        "refused": t.refused_total(),
        "refused_by_code": t.refused,
        "refused_file": file,
    });
    emit(opts, json, || {
        let mut text = format!(
            "ingest: {} line(s): {} applied, {} replayed, {} refused",
            t.lines,
            t.applied,
            t.replayed,
            t.refused_total()
        );
        if let Some(file) = &file {
            let codes: Vec<String> = t.refused.iter().map(|(c, n)| format!("{c} {n}")).collect();
            text.push_str(&format!(" ({}); refused lines in {file}", codes.join(", ")));
        }
        text
    })?;
    Ok(if t.refused_total() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Progress on stderr by bytes read: a bar on a terminal, a line per batch elsewhere.
enum Progress {
    Bar(ProgressBar),
    Plain,
}

fn progress(size: u64) -> Progress {
    if !std::io::stderr().is_terminal() {
        return Progress::Plain;
    }
    let mut bar = ProgressBar::new(size);
    if let Ok(style) =
        ProgressStyle::with_template("ingest {bar:30} {bytes}/{total_bytes} {msg} [{elapsed}]")
    {
        bar = bar.with_style(style);
    }
    Progress::Bar(bar)
}

impl Progress {
    fn at(&self, read: u64, t: &Tally) {
        let msg = format!(
            "{} applied, {} replayed, {} refused",
            t.applied,
            t.replayed,
            t.refused_total()
        );
        match self {
            Progress::Bar(bar) => {
                bar.set_position(read);
                bar.set_message(msg);
            }
            Progress::Plain => eprintln!("ingest: {} line(s): {msg}", t.lines),
        }
    }

    fn finish(self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}
