//! Credit blocks: money sold or given with terms of its own — a priority, an expiry, a
//! category (paid or promotional) — as Stripe's credit grants, Orb's credit blocks and
//! Lago's wallets sell it.
//!
//! A block is a breakdown of the account's money, not a second balance: the account's
//! `balance` and `held` stay the totals every check reads, and
//!
//! ```text
//! balance = general + Σ block.remaining        held = general held + Σ block.held
//! ```
//!
//! where *general* money is what is not in a block: every credit without terms (today's
//! money: paid, priority 50, no expiry), and where a debit past the blocks takes the
//! account into debt (general below zero, within the buffer). An account that never had
//! a block has no rows to read and pays nothing for them.
//!
//! Money is drawn in one order ([`AccountSnapshot::spending_order`]): by priority (lower
//! first), then the earliest expiry (none last), then the oldest; general money ranks as
//! priority 50 with no expiry, created with the account (so first among its equals). A
//! draw takes each source's free money (remaining less held) in that order, and what is
//! left past all of them from general money, as debt. A block past its expiry is never
//! drawn: its free money is not available ([`AccountSnapshot::expired_money`]) until the
//! expiry pass writes it off; the part an open hold reserved stays reserved, is captured
//! from the block if the job succeeds, and, released, is written off by the next pass.
//!
//! A credit with terms pays the debt first; the rest is its block's. A refund of a
//! top-up takes back from the block the top-up made as much as is free there, and the
//! rest from general money (a refund applies whole, so that part may be debt). A job
//! refund gives back to the blocks the job was charged from, the last drawn first; a
//! block that expired meanwhile takes it back too, and the next pass writes it off.

use serde::{Deserialize, Serialize};

use super::{AccountSnapshot, Timestamp};
use crate::refusal::Refusal;

/// The block id that stands for general money in a draw's lines.
pub const GENERAL: i64 = 0;

/// What a block is: bought, or given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CreditCategory {
    #[default]
    Paid,
    Promotional,
}

impl CreditCategory {
    pub fn as_str(self) -> &'static str {
        match self {
            CreditCategory::Paid => "paid",
            CreditCategory::Promotional => "promotional",
        }
    }

    pub fn parse(text: &str) -> Option<CreditCategory> {
        match text {
            "paid" => Some(CreditCategory::Paid),
            "promotional" => Some(CreditCategory::Promotional),
            _ => None,
        }
    }
}

/// The terms a credit gives its block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockTerms {
    pub category: CreditCategory,
    /// 0 to 100; lower is drawn first.
    pub priority: i64,
    pub expires_at: Option<Timestamp>,
}

impl BlockTerms {
    /// Today's money: paid, priority 50, no expiry (a credit with these terms, or none,
    /// is general money).
    pub const GENERAL: BlockTerms = BlockTerms {
        category: CreditCategory::Paid,
        priority: DEFAULT_PRIORITY,
        expires_at: None,
    };

    /// Terms a client may ask for: a priority in 0–100. Any expiry: one at or before now
    /// makes a block expired from the start (an import of history), in the balance but
    /// not available, written off by the next expiry pass.
    pub fn check(&self) -> Result<(), Refusal> {
        if !(0..=MAX_PRIORITY).contains(&self.priority) {
            return Err(Refusal::InvalidRequest(format!(
                "priority: must be 0 to {MAX_PRIORITY}"
            )));
        }
        Ok(())
    }

    /// Whether a credit on these terms makes a block (else it is general money).
    pub fn makes_block(&self) -> bool {
        *self != BlockTerms::GENERAL
    }
}

pub const DEFAULT_PRIORITY: i64 = 50;
pub const MAX_PRIORITY: i64 = 100;

/// A block of an account, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditBlock {
    pub id: i64,
    pub terms: BlockTerms,
    pub created_at: Timestamp,
    /// What the credit put in it (after paying any debt).
    pub granted: i64,
    pub remaining: i64,
    /// What open holds reserved of `remaining`.
    pub held: i64,
}

impl CreditBlock {
    pub fn free(&self) -> i64 {
        self.remaining - self.held
    }

    pub fn expired(&self, now: Timestamp) -> bool {
        self.terms.expires_at.is_some_and(|at| at <= now)
    }

    /// What `credit.expiring` says of it.
    pub fn expiring_data(&self) -> serde_json::Value {
        let expires_at = self.terms.expires_at.unwrap_or(Timestamp::MAX);
        serde_json::json!({
            "block_id": self.id,
            "category": self.terms.category.as_str(),
            "priority": self.terms.priority,
            "expires_at": super::rfc3339(expires_at),
            "remaining": crate::Micros(self.remaining).format(),
            "remaining_micros": self.remaining,
            "held_micros": self.held,
        })
    }
}

/// The end of the window in which a block's expiry is told at `now`: `notice_days` days
/// on (none when 0: the window ends at `now`).
pub fn expiring_window_end(now: Timestamp, notice_days: i64) -> Timestamp {
    let day = 86_400 * super::MICROS_PER_SECOND;
    now.saturating_add(notice_days.saturating_mul(day))
}

/// One line of a draw: how much of which block ([`GENERAL`] for general money).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockAmount {
    pub block: i64,
    pub amount: i64,
}

/// What a draw's lines do to their blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockEffect {
    /// Spent or written off: `remaining` falls.
    Take,
    /// Given back (a job refund): `remaining` grows.
    Give,
    /// Reserved by a hold: `held` grows.
    Hold,
    /// A hold's reservation ends: `held` falls.
    Release,
}

/// The place of a source of money in the spending order.
type Rank = (i64, bool, Option<Timestamp>, Timestamp, i64);

fn rank(terms: &BlockTerms, created_at: Timestamp, id: i64) -> Rank {
    let never = terms.expires_at.is_none();
    (terms.priority, never, terms.expires_at, created_at, id)
}

impl AccountSnapshot {
    /// The money outside blocks; below zero, the account's debt.
    pub fn general_money(&self) -> i64 {
        self.balance - self.blocks.iter().map(|b| b.remaining).sum::<i64>()
    }

    /// What open holds reserved of general money.
    pub fn general_held(&self) -> i64 {
        self.held - self.blocks.iter().map(|b| b.held).sum::<i64>()
    }

    /// The free money of blocks past their expiry, which the expiry pass has not yet
    /// written off: in the balance, not available.
    pub fn expired_money(&self) -> i64 {
        (self.blocks.iter())
            .filter(|b| b.expired(self.now))
            .map(CreditBlock::free)
            .sum()
    }

    /// The sources of money a draw takes from, in order, each with its free money:
    /// general money ([`GENERAL`]) among the blocks not past their expiry.
    pub fn spending_order(&self) -> Vec<(i64, i64)> {
        let general = self.general_money() - self.general_held();
        let mut sources = vec![(
            rank(&BlockTerms::GENERAL, self.created_at, GENERAL),
            (GENERAL, general.max(0)),
        )];
        for b in self.blocks.iter().filter(|b| !b.expired(self.now)) {
            sources.push((rank(&b.terms, b.created_at, b.id), (b.id, b.free())));
        }
        sources.sort_by_key(|(r, _)| *r);
        sources.into_iter().map(|(_, s)| s).collect()
    }

    /// Whether a block holds money: then the lines of a draw name where it came from.
    pub fn has_live_blocks(&self) -> bool {
        self.blocks.iter().any(|b| b.remaining > 0)
    }

    /// Where `amount` comes from, in the spending order: each source's free money, and
    /// what is left past them all from general money (debt). Empty where no block holds
    /// money (all of it is general money).
    pub fn draw(&self, amount: i64) -> Vec<BlockAmount> {
        if !self.has_live_blocks() || amount <= 0 {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let mut left = amount;
        for (block, free) in self.spending_order() {
            let part = free.min(left);
            if part > 0 {
                lines.push(BlockAmount {
                    block,
                    amount: part,
                });
                left -= part;
            }
        }
        if left > 0 {
            add_line(&mut lines, GENERAL, left);
        }
        lines
    }

    /// What a capture of `capture` out of a hold reserved by `reserved` takes, from the
    /// reserved sources in their order.
    pub fn capture_lines(reserved: &[BlockAmount], capture: i64) -> Vec<BlockAmount> {
        let mut left = capture;
        let mut lines = Vec::new();
        for line in reserved {
            let part = line.amount.min(left);
            if part > 0 {
                lines.push(BlockAmount {
                    block: line.block,
                    amount: part,
                });
                left -= part;
            }
        }
        lines
    }

    /// What a refund of `amount` of the top-up that made `block` takes back: what is
    /// free in the block, the rest from general money.
    pub fn refund_lines(&self, block: Option<i64>, amount: i64) -> Vec<BlockAmount> {
        let free = (block.and_then(|id| self.blocks.iter().find(|b| b.id == id)))
            .map_or(0, |b| b.free().max(0));
        let mut lines = Vec::new();
        if let Some(id) = block.filter(|_| free > 0) {
            add_line(&mut lines, id, free.min(amount));
        }
        if amount > free && self.has_live_blocks() {
            add_line(&mut lines, GENERAL, amount - free);
        }
        lines
    }

    /// What a job refund of `amount` gives back, to the blocks the job was charged from
    /// (`charged`), the last drawn first; past them, to general money.
    pub fn give_back_lines(charged: &[BlockAmount], amount: i64) -> Vec<BlockAmount> {
        let mut left = amount;
        let mut lines = Vec::new();
        for line in charged.iter().rev() {
            let part = line.amount.min(left);
            if part > 0 {
                add_line(&mut lines, line.block, part);
                left -= part;
            }
        }
        if left > 0 && !charged.is_empty() {
            add_line(&mut lines, GENERAL, left);
        }
        lines
    }

    /// What the expiry pass writes off: the free money of each block past its expiry.
    pub fn expiring_lines(&self) -> Vec<BlockAmount> {
        (self.blocks.iter())
            .filter(|b| b.expired(self.now) && b.free() > 0)
            .map(|b| BlockAmount {
                block: b.id,
                amount: b.free(),
            })
            .collect()
    }

    /// The part of a credit of `amount` on terms that make a block which the block
    /// keeps: the account's debt is paid first.
    pub fn block_share_of_credit(&self, amount: i64) -> i64 {
        let debt = (-self.general_money()).max(0);
        amount - debt.min(amount)
    }

    /// This snapshot after a money change and the lines of the blocks it moved: taken
    /// from them where the balance falls, given back where it grows. The balance and its
    /// blocks move together, so every unit applies a change through here.
    pub fn apply_money_from(
        &mut self,
        after: &super::MoneyAfter,
        lines: &[BlockAmount],
    ) -> Result<(), String> {
        let effect = if after.balance_micros < self.balance {
            BlockEffect::Take
        } else {
            BlockEffect::Give
        };
        self.apply_money(after);
        self.apply_block_lines(lines, effect)
    }

    /// Applies a draw's lines to the blocks (general money lines change nothing here:
    /// general money is what the balance leaves). A line naming a block the snapshot
    /// does not hold is refused.
    pub fn apply_block_lines(
        &mut self,
        lines: &[BlockAmount],
        effect: BlockEffect,
    ) -> Result<(), String> {
        for line in lines.iter().filter(|l| l.block != GENERAL) {
            let block = (self.blocks.iter_mut())
                .find(|b| b.id == line.block)
                .ok_or_else(|| format!("block {} is not the account's", line.block))?;
            match effect {
                BlockEffect::Take => block.remaining -= line.amount,
                BlockEffect::Give => block.remaining += line.amount,
                BlockEffect::Hold => block.held += line.amount,
                BlockEffect::Release => block.held -= line.amount,
            }
            if block.held < 0 || block.held > block.remaining {
                return Err(format!(
                    "block {}: held {} of {} remaining",
                    block.id, block.held, block.remaining
                ));
            }
        }
        Ok(())
    }
}

fn add_line(lines: &mut Vec<BlockAmount>, block: i64, amount: i64) {
    match lines.iter_mut().find(|l| l.block == block) {
        Some(line) => line.amount += amount,
        None => lines.push(BlockAmount { block, amount }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::tests_support::snapshot;
    use proptest::prelude::*;

    fn block(id: i64, priority: i64, expires_at: Option<Timestamp>, remaining: i64) -> CreditBlock {
        CreditBlock {
            id,
            terms: BlockTerms {
                category: CreditCategory::Promotional,
                priority,
                expires_at,
            },
            created_at: id,
            granted: remaining,
            remaining,
            held: 0,
        }
    }

    /// An account of general money `general` and these blocks, at time 1,000.
    fn account(general: i64, blocks: Vec<CreditBlock>) -> AccountSnapshot {
        let mut snap = snapshot(general + blocks.iter().map(|b| b.remaining).sum::<i64>());
        snap.blocks = blocks;
        snap.now = 1_000;
        snap
    }

    fn lines(pairs: &[(i64, i64)]) -> Vec<BlockAmount> {
        (pairs.iter())
            .map(|&(block, amount)| BlockAmount { block, amount })
            .collect()
    }

    #[test]
    fn draws_by_priority_then_expiry_then_age_general_among_its_equals() {
        let snap = account(
            10,
            vec![
                block(1, 50, None, 10),
                block(2, 50, Some(5_000), 10),
                block(3, 10, None, 10),
                block(4, 50, Some(2_000), 10),
                block(5, 90, Some(1_500), 10),
            ],
        );
        let order: Vec<i64> = snap.spending_order().iter().map(|s| s.0).collect();
        assert_eq!(order, [3, 4, 2, GENERAL, 1, 5]);
        assert_eq!(snap.draw(25), lines(&[(3, 10), (4, 10), (2, 5)]));
    }

    #[test]
    fn past_all_blocks_a_draw_is_debt_and_a_credit_pays_it_first() {
        let mut snap = account(0, vec![block(1, 50, None, 30)]);
        assert_eq!(snap.draw(50), lines(&[(1, 30), (GENERAL, 20)]));
        snap.apply_block_lines(&snap.draw(50), BlockEffect::Take)
            .unwrap();
        snap.balance -= 50;
        assert_eq!((snap.general_money(), snap.balance), (-20, -20));
        assert_eq!(snap.block_share_of_credit(15), 0);
        assert_eq!(snap.block_share_of_credit(100), 80);
    }

    #[test]
    fn an_expired_block_is_neither_drawn_nor_available_until_written_off() {
        let mut snap = account(5, vec![block(1, 0, Some(1_000), 40), block(2, 0, None, 10)]);
        snap.blocks[0].held = 15;
        snap.held = 15;
        assert_eq!(snap.expired_money(), 25);
        assert_eq!(snap.available_money(), 5 + 10);
        assert_eq!(snap.draw(12), lines(&[(2, 10), (GENERAL, 2)]));
        // The pass writes off the free part; the reserved part waits for its job.
        assert_eq!(snap.expiring_lines(), lines(&[(1, 25)]));
        assert_eq!(
            AccountSnapshot::capture_lines(&lines(&[(1, 15)]), 10),
            lines(&[(1, 10)])
        );
    }

    #[test]
    fn a_hold_reserves_and_its_capture_takes_from_the_same_sources() {
        let mut snap = account(20, vec![block(1, 10, None, 5), block(2, 60, None, 50)]);
        let reserved = snap.draw(30);
        assert_eq!(reserved, lines(&[(1, 5), (GENERAL, 20), (2, 5)]));
        snap.apply_block_lines(&reserved, BlockEffect::Hold)
            .unwrap();
        snap.held += 30;
        // A second hold sees only what is free.
        assert_eq!(snap.draw(10), lines(&[(2, 10)]));
        let taken = AccountSnapshot::capture_lines(&reserved, 22);
        assert_eq!(taken, lines(&[(1, 5), (GENERAL, 17)]));
        snap.apply_block_lines(&reserved, BlockEffect::Release)
            .unwrap();
        snap.apply_block_lines(&taken, BlockEffect::Take).unwrap();
        assert_eq!((snap.blocks[0].remaining, snap.blocks[1].held), (0, 0));
    }

    #[test]
    fn refunds_take_back_from_their_block_and_job_refunds_give_back_last_first() {
        let mut snap = account(10, vec![block(1, 50, None, 30)]);
        snap.blocks[0].held = 20;
        assert_eq!(
            snap.refund_lines(Some(1), 25),
            lines(&[(1, 10), (GENERAL, 15)])
        );
        assert_eq!(snap.refund_lines(None, 5), lines(&[(GENERAL, 5)]));
        assert_eq!(account(3, vec![]).refund_lines(None, 5), lines(&[]));
        let charged = lines(&[(1, 4), (GENERAL, 6)]);
        let give = AccountSnapshot::give_back_lines(&charged, 8);
        assert_eq!(give, lines(&[(GENERAL, 6), (1, 2)]));
    }

    #[test]
    fn terms_are_checked_and_plain_terms_make_no_block() {
        assert!(!BlockTerms::GENERAL.makes_block());
        let mut terms = BlockTerms::GENERAL;
        terms.priority = 101;
        assert!(terms.check().is_err());
        terms.priority = -1;
        assert!(terms.check().is_err());
        terms.priority = 0;
        assert!(terms.makes_block() && terms.check().is_ok());
        let unknown_block =
            account(0, vec![]).apply_block_lines(&lines(&[(7, 1)]), BlockEffect::Take);
        assert!(unknown_block.is_err());
    }

    /// A source of money in the reference model: a flat list in the order a person would
    /// sort it by hand, drawn front to back.
    fn reference_draw(snap: &AccountSnapshot, amount: i64) -> Vec<(i64, i64)> {
        let mut sources: Vec<(i64, i64, i64, i64, i64)> = (snap.blocks.iter())
            .filter(|b| !b.expired(snap.now))
            .map(|b| {
                let expiry = b.terms.expires_at.unwrap_or(i64::MAX);
                (b.terms.priority, expiry, b.created_at, b.id, b.free())
            })
            .collect();
        let general_free = (snap.general_money() - snap.general_held()).max(0);
        sources.push((50, i64::MAX, snap.created_at, GENERAL, general_free));
        sources.sort();
        let mut out: Vec<(i64, i64)> = Vec::new();
        let mut left = amount;
        for (_, _, _, id, free) in sources {
            let part = free.min(left);
            if part > 0 {
                out.push((id, part));
                left -= part;
            }
        }
        if left > 0 {
            match out.iter_mut().find(|(id, _)| *id == GENERAL) {
                Some(general) => general.1 += left,
                None => out.push((GENERAL, left)),
            }
        }
        out
    }

    fn any_block() -> impl Strategy<Value = (i64, Option<i64>, i64, i64)> {
        (
            0i64..=100,
            proptest::option::of(500i64..2_000),
            0i64..100,
            0i64..100,
        )
    }

    proptest! {
        /// Draws, holds, captures and refunds keep `balance = general + Σ remaining`,
        /// `0 ≤ held ≤ remaining` per block, and every draw matches the reference.
        #[test]
        fn draws_match_the_reference_and_keep_the_breakdown(
            general in -50i64..200,
            blocks in proptest::collection::vec(any_block(), 0..5),
            draws in proptest::collection::vec((1i64..150, 0u8..3), 1..12),
        ) {
            let blocks = blocks.into_iter().enumerate().map(|(i, (priority, expiry, remaining, held))| {
                let mut b = block(i as i64 + 1, priority, expiry, remaining);
                b.held = held.min(remaining);
                b
            }).collect::<Vec<_>>();
            let mut snap = account(general, blocks);
            snap.held = snap.blocks.iter().map(|b| b.held).sum();
            for (amount, what) in draws {
                let lines = snap.draw(amount);
                if !snap.has_live_blocks() {
                    prop_assert!(lines.is_empty());
                } else {
                    let got: Vec<(i64, i64)> = lines.iter().map(|l| (l.block, l.amount)).collect();
                    prop_assert_eq!(got, reference_draw(&snap, amount));
                    prop_assert_eq!(lines.iter().map(|l| l.amount).sum::<i64>(), amount);
                }
                match what {
                    // A debit.
                    0 => {
                        snap.apply_block_lines(&lines, BlockEffect::Take).unwrap();
                        snap.balance -= amount;
                    }
                    // A hold, when it fits (as a submit checks), captured in part.
                    1 if snap.available_money() >= amount => {
                        snap.apply_block_lines(&lines, BlockEffect::Hold).unwrap();
                        snap.held += amount;
                        let taken = AccountSnapshot::capture_lines(&lines, amount / 2);
                        snap.apply_block_lines(&lines, BlockEffect::Release).unwrap();
                        snap.apply_block_lines(&taken, BlockEffect::Take).unwrap();
                        snap.held -= amount;
                        snap.balance -= amount / 2;
                    }
                    // The expiry pass.
                    _ => {
                        let expiring = snap.expiring_lines();
                        snap.apply_block_lines(&expiring, BlockEffect::Take).unwrap();
                        snap.balance -= expiring.iter().map(|l| l.amount).sum::<i64>();
                        prop_assert_eq!(snap.expired_money(), 0);
                    }
                }
                for b in &snap.blocks {
                    prop_assert!(0 <= b.held && b.held <= b.remaining, "{b:?}");
                }
                prop_assert!(snap.general_held() >= 0);
            }
        }
    }
}
