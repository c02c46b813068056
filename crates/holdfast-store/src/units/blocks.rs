//! Credit blocks as stored: read with an account that has had them, written where a
//! unit of work changed them, made by a credit with terms. What a block does is core's
//! ([`holdfast_core::decide::blocks`]); here it is only read and written.

use holdfast_core::AccountId;
use std::collections::BTreeMap;

use holdfast_core::decide::{BlockAmount, BlockTerms, CreditBlock, CreditCategory, GENERAL};

use crate::driver::db::{Row, Tx};
use crate::driver::statement::Stmt;
use crate::error::StoreError;
use crate::{params, statement};

static ACCOUNT_BLOCKS: Stmt = statement!(shared "account_blocks");
static READ_BLOCK: Stmt = statement!(shared "read_block");
static INSERT_BLOCK: Stmt = statement!(shared "insert_block");
static WRITE_LIVE_BLOCKS: Stmt = statement!(shared "write_live_blocks");
static SET_ENTRY_BLOCKS: Stmt = statement!(shared "set_entry_blocks");
static WRITE_BLOCK: Stmt = statement!(shared "write_block");

pub(crate) fn block_from(row: &Row) -> Result<CreditBlock, StoreError> {
    block_of((
        row.int("block_id")?,
        row.text("category")?,
        row.int("priority")?,
        row.opt_int("expires_at")?,
        row.int("created_at")?,
        row.int("granted")?,
        row.int("remaining")?,
        row.int("held")?,
    ))
}

/// A block as a lock statement lists it: `[id, category, priority, expires_at,
/// created_at, granted, remaining, held]`.
type BlockColumns = (i64, String, i64, Option<i64>, i64, i64, i64, i64);

/// The blocks a lock statement read with its account (`blocks`, a JSON array).
pub(crate) fn blocks_of(text: &str) -> Result<Vec<CreditBlock>, StoreError> {
    let listed: Vec<BlockColumns> =
        serde_json::from_str(text).map_err(|e| StoreError::Corrupt(format!("blocks: {e}")))?;
    listed.into_iter().map(block_of).collect()
}

fn block_of(columns: BlockColumns) -> Result<CreditBlock, StoreError> {
    let (id, category, priority, expires_at, created_at, granted, remaining, held) = columns;
    let category = CreditCategory::parse(&category)
        .ok_or_else(|| StoreError::Corrupt(format!("a block of category {category:?}")))?;
    Ok(CreditBlock {
        id,
        terms: BlockTerms {
            category,
            priority,
            expires_at,
        },
        created_at,
        granted,
        remaining,
        held,
    })
}

/// A block as a write sets it: what is left of it, what holds reserved.
#[derive(serde::Serialize)]
pub(crate) struct BlockWrite {
    block_id: i64,
    remaining: i64,
    held: i64,
}

impl BlockWrite {
    pub(crate) fn of(b: &CreditBlock) -> BlockWrite {
        BlockWrite {
            block_id: b.id,
            remaining: b.remaining,
            held: b.held,
        }
    }
}

/// The account's blocks that hold money.
pub(crate) async fn read_blocks(
    tx: &mut Tx,
    account: &AccountId,
) -> Result<Vec<CreditBlock>, StoreError> {
    let rows = (tx.rows(&ACCOUNT_BLOCKS, params! { account_id: account.as_str() })).await?;
    rows.iter().map(block_from).collect()
}

/// One block of the account, whatever it holds (`None`: not the account's).
pub(crate) async fn read_block(
    tx: &mut Tx,
    account: &AccountId,
    block: i64,
) -> Result<Option<CreditBlock>, StoreError> {
    let params = params! { account_id: account.as_str(), block_id: block };
    let row = tx.maybe_row(&READ_BLOCK, params).await?;
    row.as_ref().map(block_from).transpose()
}

/// The credit blocks a unit of work changed, and what the account's live blocks are
/// after it (`None`: it changed none).
#[derive(Debug, Default)]
pub(crate) struct ChangedBlocks {
    pub rows: Vec<CreditBlock>,
    pub live: Option<String>,
}

impl ChangedBlocks {
    /// `changed` of the account whose blocks are now `all`.
    pub(crate) fn of(changed: Vec<CreditBlock>, all: &[CreditBlock]) -> ChangedBlocks {
        let live = (!changed.is_empty()).then(|| live_blocks_text(all));
        ChangedBlocks {
            rows: changed,
            live,
        }
    }
}

/// The blocks that hold money as `accounts.live_blocks` keeps them (the columns
/// [`blocks_of`] reads), by id.
pub(crate) fn live_blocks_text(all: &[CreditBlock]) -> String {
    let mut live: Vec<BlockColumns> = (all.iter().filter(|b| b.remaining > 0))
        .map(|b| {
            let t = &b.terms;
            let category = t.category.as_str().to_owned();
            (
                b.id,
                category,
                t.priority,
                t.expires_at,
                b.created_at,
                b.granted,
                b.remaining,
                b.held,
            )
        })
        .collect();
    live.sort_unstable_by_key(|b| b.0);
    serde_json::to_string(&live).expect("blocks serialize")
}

/// Writes the blocks as a unit of work left them, and the account's live blocks.
pub(crate) async fn write_blocks(
    tx: &mut Tx,
    account: &str,
    changed: &ChangedBlocks,
) -> Result<(), StoreError> {
    for b in &changed.rows {
        let params = params! { block_id: b.id, remaining: b.remaining, held: b.held };
        if tx.exec(&WRITE_BLOCK, params).await? != 1 {
            return Err(StoreError::Corrupt(format!("block {}: not written", b.id)));
        }
    }
    if let Some(live) = &changed.live {
        write_live_blocks(tx, account, live).await?;
    }
    Ok(())
}

async fn write_live_blocks(tx: &mut Tx, account: &str, live: &str) -> Result<(), StoreError> {
    let params = params! { account_id: account, live_blocks: live };
    tx.exec(&WRITE_LIVE_BLOCKS, params).await?;
    Ok(())
}

/// Writes the block a credit made (its id the credit's entry's) and the account's live
/// blocks with it (`all`), and names the lines of the credit on its entry.
pub(crate) async fn insert_block(
    tx: &mut Tx,
    account: &AccountId,
    block: &CreditBlock,
    all: &[CreditBlock],
    lines: &[BlockAmount],
) -> Result<(), StoreError> {
    let t = &block.terms;
    let params = params! {
        block_id: block.id, account_id: account.as_str(), category: t.category.as_str(),
        priority: t.priority, expires_at: t.expires_at, now: block.created_at,
        granted: block.granted,
    };
    tx.exec(&INSERT_BLOCK, params).await?;
    write_live_blocks(tx, account.as_str(), &live_blocks_text(all)).await?;
    set_entry_blocks(tx, block.id, lines).await
}

/// Names the blocks an entry moved.
pub(crate) async fn set_entry_blocks(
    tx: &mut Tx,
    entry_id: i64,
    lines: &[BlockAmount],
) -> Result<(), StoreError> {
    let params = params! { entry_id: entry_id, blocks: lines_text(lines) };
    tx.exec(&SET_ENTRY_BLOCKS, params).await?;
    Ok(())
}

/// A draw's lines as a ledger entry stores them: JSON, or NULL when there are none.
pub(crate) fn lines_text(lines: &[BlockAmount]) -> Option<String> {
    (!lines.is_empty()).then(|| serde_json::to_string(lines).expect("lines serialize"))
}

/// Adds what an entry of `delta` moved of each block it names to `moved` (a positive
/// entry gives to its blocks, a negative one takes): summed over a block's entries, its
/// remaining (invariant 10).
pub(crate) fn tally_moves(moved: &mut BTreeMap<i64, i64>, delta: i64, lines: &[BlockAmount]) {
    for line in lines.iter().filter(|l| l.block != GENERAL) {
        *moved.entry(line.block).or_insert(0) += delta.signum() * line.amount;
    }
}

/// Adds what a hold line reserved of each credit block (its `sources`; general money
/// aside) to `held`: summed over the open holds, each block's held (invariant 10).
pub(crate) fn tally_held(held: &mut BTreeMap<i64, i64>, sources: &[BlockAmount]) {
    for source in sources.iter().filter(|s| s.block != GENERAL) {
        *held.entry(source.block).or_insert(0) += source.amount;
    }
}

/// A ledger entry's lines as stored.
pub(crate) fn lines_of(text: Option<String>) -> Result<Vec<BlockAmount>, StoreError> {
    text.map_or(Ok(Vec::new()), |t| {
        serde_json::from_str(&t).map_err(|e| StoreError::Corrupt(format!("blocks: {e}")))
    })
}
