//! Decisions that give back: refunding what a job was charged, and an operator's grant of
//! allowance items. Both credit a pocket without a client paying for it, so neither
//! counts as `total_credited`.

use super::{
    AccountSnapshot, BlockAmount, JobStatus, MoneyAfter, MoneyMove, PocketAmount, PocketEntry,
    change_money,
};
use crate::money::{MICROS_PER_UNIT, Micros};
use crate::ratecard::MONEY;
use crate::refusal::Refusal;

/// The longest reason an operator may give (a refund's, a grant's, a block's or ban's).
pub const MAX_REASON: usize = 500;

/// What [`check_reason`] accepts past its length (1 to [`MAX_REASON`] characters), as a
/// regular expression for the OpenAPI document (ECMA-262 and Python `re` alike): no NUL,
/// and not only whitespace — Unicode's White_Space, as `str::trim` reads it, spelled out,
/// since `\s` differs between the two (ECMA-262 has U+FEFF and not U+0085). A test pins
/// it to the function.
pub const REASON_PATTERN: &str = concat!(
    r"^[^\x00]*[^\x00\t\n\x0B\x0C\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F",
    r"\u205F\u3000][^\x00]*$"
);

/// A reason is 1 to [`MAX_REASON`] characters, not only whitespace, no NUL.
pub fn check_reason(reason: &str) -> Result<(), Refusal> {
    if reason.trim().is_empty() || reason.chars().count() > MAX_REASON || reason.contains('\0') {
        return Err(Refusal::InvalidRequest(format!(
            "reason: must be 1 to {MAX_REASON} characters"
        )));
    }
    Ok(())
}

/// What a job refund writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRefundPlan {
    /// The money pocket after a money refund; `None` for an allowance refund.
    pub money: Option<MoneyAfter>,
    pub entry: PocketEntry,
    /// What the job has been refunded in all, this refund included.
    pub refunded: Vec<PocketAmount>,
    /// The account after it.
    pub after: AccountSnapshot,
}

/// The amount a refund asks for, in the unit of the pocket it is for: money in micros;
/// an allowance in whole items, given as a decimal without a fraction (`"1"`).
pub fn refund_units(pocket: &str, asked: Micros) -> Result<i64, Refusal> {
    if pocket == MONEY {
        return Ok(asked.0);
    }
    if asked.0 % MICROS_PER_UNIT != 0 {
        return Err(Refusal::InvalidRequest(format!(
            "amount: {pocket} is refunded in whole items, not {}",
            asked.format()
        )));
    }
    Ok(asked.0 / MICROS_PER_UNIT)
}

/// What is left to refund of one charge line after the refunds so far.
fn left_to_refund(line: &PocketAmount, refunded: &[PocketAmount]) -> i64 {
    let given = refunded
        .iter()
        .filter(|r| r.pocket == line.pocket)
        .map(|r| r.amount)
        .sum::<i64>();
    line.amount - given
}

/// A refund of a job that ended `status` having been charged `charged` (one pocket:
/// a hold is on one pocket) and refunded `refunded` so far: all that is left by default
/// (`asked = None`), or `asked`, never more than is left. Only a succeeded job that was
/// charged is refundable. Money goes back to the balance and out of `total_spent` (it was
/// spending that did not stand) and may end a suspension; an allowance item goes back to
/// its pocket (until the pocket's next refill resets it).
pub fn plan_job_refund(
    snap: &AccountSnapshot,
    status: JobStatus,
    charged: &[PocketAmount],
    refunded: &[PocketAmount],
    asked: Option<Micros>,
    buffer: Micros,
) -> Result<JobRefundPlan, Refusal> {
    let charged_lines: Vec<&PocketAmount> = charged.iter().filter(|c| c.amount > 0).collect();
    let line = match (status, charged_lines.as_slice()) {
        (JobStatus::Succeeded, [line]) => *line,
        _ => return Err(Refusal::JobNotRefundable),
    };
    let left = left_to_refund(line, refunded);
    let amount = match asked {
        None => left,
        Some(a) => refund_units(&line.pocket, a)?,
    };
    if amount <= 0 || amount > left {
        return Err(Refusal::RefundExceedsCharge);
    }
    let mut after = snap.clone();
    let mut blocks = Vec::new();
    let (money, entry) = if line.pocket == MONEY {
        let money = change_money(&after, MoneyMove::JobRefund(Micros(amount)))?;
        blocks = AccountSnapshot::give_back_lines(&blocks_left(line, refunded), amount);
        (after.apply_money_from(&money, &blocks))
            .map_err(|e| Refusal::InvalidRequest(format!("job refund: {e}")))?;
        (
            Some(money),
            money_entry(&after, amount, buffer, blocks.clone()),
        )
    } else {
        (None, credit_pocket(&mut after, &line.pocket, amount)?)
    };
    let mut total: Vec<PocketAmount> = refunded.to_vec();
    match total.iter_mut().find(|r| r.pocket == line.pocket) {
        Some(r) => {
            r.amount += amount;
            for b in blocks {
                add_block_line(&mut r.blocks, b);
            }
        }
        None => total.push(PocketAmount {
            pocket: line.pocket.clone(),
            amount,
            blocks,
        }),
    }
    Ok(JobRefundPlan {
        money,
        entry,
        refunded: total,
        after,
    })
}

/// What a charge took from each credit block, less what its refunds gave back, in the
/// order it was drawn.
fn blocks_left(line: &PocketAmount, refunded: &[PocketAmount]) -> Vec<BlockAmount> {
    let given = refunded.iter().filter(|r| r.pocket == line.pocket);
    let given: Vec<&BlockAmount> = given.flat_map(|r| r.blocks.iter()).collect();
    (line.blocks.iter())
        .map(|b| BlockAmount {
            block: b.block,
            amount: b.amount
                - given
                    .iter()
                    .filter(|g| g.block == b.block)
                    .map(|g| g.amount)
                    .sum::<i64>(),
        })
        .filter(|b| b.amount > 0)
        .collect()
}

fn add_block_line(lines: &mut Vec<BlockAmount>, line: BlockAmount) {
    match lines.iter_mut().find(|l| l.block == line.block) {
        Some(l) => l.amount += line.amount,
        None => lines.push(line),
    }
}

fn money_entry(
    after: &AccountSnapshot,
    amount: i64,
    buffer: Micros,
    blocks: Vec<BlockAmount>,
) -> PocketEntry {
    PocketEntry {
        pocket: MONEY.to_owned(),
        delta: amount,
        amount_after: after.balance,
        available_after: after.balance - after.held,
        buffer_micros: Some(buffer.0),
        blocks,
    }
}

/// Adds `amount` items to an allowance pocket of `snap` (its remaining may pass the
/// quota; the next refill resets it).
fn credit_pocket(
    snap: &mut AccountSnapshot,
    pocket: &str,
    amount: i64,
) -> Result<PocketEntry, Refusal> {
    let p = snap
        .allowances
        .get_mut(pocket)
        .ok_or_else(|| Refusal::InvalidRequest(format!("pocket: the account has no {pocket}")))?;
    let remaining = p
        .remaining
        .checked_add(amount)
        .filter(|r| *r <= MAX_ALLOWANCE)
        .ok_or(Refusal::AmountOutOfRange)?;
    p.remaining = remaining;
    Ok(PocketEntry {
        pocket: pocket.to_owned(),
        delta: amount,
        amount_after: remaining,
        available_after: remaining - p.held,
        buffer_micros: None,
        blocks: Vec::new(),
    })
}

/// The most items an allowance pocket may hold (a bound for grants, far above any quota).
pub const MAX_ALLOWANCE: i64 = 1_000_000_000;

/// An operator's grant of `amount` items to an allowance pocket of the account's plan
/// (the pocket must exist on the account: its plan gives it). It lasts until the
/// pocket's next refill, which resets the pocket to its quota.
pub fn plan_grant(
    snap: &AccountSnapshot,
    pocket: &str,
    amount: i64,
) -> Result<(PocketEntry, AccountSnapshot), Refusal> {
    if pocket == MONEY {
        return Err(Refusal::InvalidRequest(
            "pocket: money is credited by a top-up or a bonus, not a grant".into(),
        ));
    }
    if !(1..=MAX_ALLOWANCE).contains(&amount) {
        return Err(Refusal::InvalidRequest(format!(
            "amount: must be a whole number of items, 1 to {MAX_ALLOWANCE}"
        )));
    }
    let mut after = snap.clone();
    let entry = credit_pocket(&mut after, pocket, amount)?;
    Ok((entry, after))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::Suspension;
    use crate::decide::tests_support::snapshot;

    fn line(pocket: &str, amount: i64) -> PocketAmount {
        PocketAmount {
            pocket: pocket.into(),
            amount,
            blocks: Vec::new(),
        }
    }

    const BUFFER: Micros = Micros(1_000_000);

    #[test]
    fn a_money_refund_gives_back_what_is_left_and_unspends_it() {
        let mut snap = snapshot(-200_000);
        snap.total_spent = 1_000_000;
        snap.suspended_at = Some(5);
        let charged = [line(MONEY, 1_000_000)];
        let plan = plan_job_refund(
            &snap,
            JobStatus::Succeeded,
            &charged,
            &[line(MONEY, 300_000)],
            None,
            BUFFER,
        )
        .unwrap();
        assert_eq!(plan.entry.delta, 700_000);
        assert_eq!(plan.entry.amount_after, 500_000);
        assert_eq!(plan.refunded, vec![line(MONEY, 1_000_000)]);
        let money = plan.money.unwrap();
        assert_eq!(money.total_spent_micros, 300_000);
        assert_eq!(money.total_credited_micros, snap.total_credited);
        assert_eq!(money.suspension, Suspension::Unsuspend);
        assert_eq!(plan.after.suspended_at, None);
    }

    #[test]
    fn a_refund_that_leaves_the_balance_negative_keeps_the_suspension() {
        let mut snap = snapshot(-900_000);
        snap.total_spent = 1_000_000;
        snap.suspended_at = Some(5);
        let charged = [line(MONEY, 1_000_000)];
        let plan = plan_job_refund(
            &snap,
            JobStatus::Succeeded,
            &charged,
            &[],
            Some(Micros(100_000)),
            BUFFER,
        )
        .unwrap();
        assert_eq!(plan.after.balance, -800_000);
        assert_eq!(plan.money.unwrap().suspension, Suspension::Unchanged);
        assert_eq!(plan.after.suspended_at, Some(5));
    }

    #[test]
    fn never_more_than_was_charged() {
        let snap = snapshot(0);
        let charged = [line(MONEY, 1_000_000)];
        let refund = |refunded: &[PocketAmount], asked| {
            plan_job_refund(
                &snap,
                JobStatus::Succeeded,
                &charged,
                refunded,
                asked,
                BUFFER,
            )
        };
        assert!(refund(&[line(MONEY, 900_000)], Some(Micros(100_000))).is_ok());
        assert_eq!(
            refund(&[line(MONEY, 900_000)], Some(Micros(100_001))),
            Err(Refusal::RefundExceedsCharge)
        );
        assert_eq!(
            refund(&[line(MONEY, 1_000_000)], None),
            Err(Refusal::RefundExceedsCharge)
        );
    }

    #[test]
    fn only_a_charged_success_is_refundable() {
        let snap = snapshot(0);
        let charged = [line(MONEY, 1)];
        for status in [
            JobStatus::Failed,
            JobStatus::Canceled,
            JobStatus::Expired,
            JobStatus::Queued,
            JobStatus::InProgress,
        ] {
            assert_eq!(
                plan_job_refund(&snap, status, &charged, &[], None, BUFFER),
                Err(Refusal::JobNotRefundable),
                "{status:?}"
            );
        }
        for nothing in [vec![], vec![line(MONEY, 0)]] {
            assert_eq!(
                plan_job_refund(&snap, JobStatus::Succeeded, &nothing, &[], None, BUFFER),
                Err(Refusal::JobNotRefundable)
            );
        }
    }

    #[test]
    fn an_allowance_refund_is_whole_items_back_to_its_pocket() {
        let snap = snapshot(0);
        let charged = [line("daily_images", 2)];
        let plan = plan_job_refund(
            &snap,
            JobStatus::Succeeded,
            &charged,
            &[],
            Some(Micros(MICROS_PER_UNIT)),
            BUFFER,
        )
        .unwrap();
        assert_eq!(plan.money, None);
        assert_eq!(plan.entry.delta, 1);
        assert_eq!(plan.entry.amount_after, 4);
        assert_eq!(plan.after.allowances["daily_images"].remaining, 4);
        assert_eq!(plan.after.balance, snap.balance);
        let half = plan_job_refund(
            &snap,
            JobStatus::Succeeded,
            &charged,
            &[],
            Some(Micros(MICROS_PER_UNIT / 2)),
            BUFFER,
        );
        assert!(matches!(half, Err(Refusal::InvalidRequest(_))), "{half:?}");
    }

    #[test]
    fn a_grant_adds_items_to_a_pocket_the_account_has() {
        let snap = snapshot(0);
        let (entry, after) = plan_grant(&snap, "daily_images", 5).unwrap();
        assert_eq!((entry.delta, entry.amount_after), (5, 8));
        assert_eq!(after.allowances["daily_images"].remaining, 8);
        for (pocket, amount) in [("money", 1), ("gold_stars", 1), ("daily_images", 0)] {
            assert!(
                matches!(
                    plan_grant(&snap, pocket, amount),
                    Err(Refusal::InvalidRequest(_))
                ),
                "{pocket} {amount}"
            );
        }
        assert!(plan_grant(&snap, "daily_images", MAX_ALLOWANCE).is_err());
    }
}

#[cfg(test)]
mod reason_tests {
    use super::*;

    #[test]
    fn a_reason_is_one_to_five_hundred_characters() {
        assert!(check_reason("duplicate charge").is_ok());
        assert!(check_reason(&"é".repeat(MAX_REASON)).is_ok());
        for bad in [
            "",
            "   ",
            "\u{85}",
            "\u{3000}\t",
            "a\0b",
            &"x".repeat(MAX_REASON + 1),
        ] {
            assert!(check_reason(bad).is_err(), "{bad:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_pattern_says_what_check_reason_accepts(
            text in "[a\u{0}\t\n\u{b}\u{c}\r \u{85}\u{a0}\u{1680}\u{2000}-\u{200b}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]{1,6}",
        ) {
            let re = regex::Regex::new(REASON_PATTERN).unwrap();
            proptest::prop_assert_eq!(re.is_match(&text), check_reason(&text).is_ok(), "{:?}", text);
        }
    }
}
