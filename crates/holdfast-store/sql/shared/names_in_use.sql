-- names_in_use: every rate-card name live data uses (a card that no longer has one of
-- them is refused at start): plans of accounts, allowance pockets, and the kinds and
-- lanes of open jobs.
SELECT DISTINCT 'plan' AS what, plan AS name FROM accounts
UNION
SELECT DISTINCT 'allowance pocket', pocket FROM allowances
UNION
SELECT DISTINCT 'kind', kind FROM jobs WHERE status IN ('queued', 'in_progress')
UNION
SELECT DISTINCT 'lane', lane FROM jobs WHERE status IN ('queued', 'in_progress')
