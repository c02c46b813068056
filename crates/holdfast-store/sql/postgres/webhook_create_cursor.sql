-- webhook_create_cursor: gives an endpoint new to this database its outbox cursor: at
-- the current end of the feed (the last event by position; the caller stamps first), or
-- at the beginning when its card entry says `from = "beginning"`. An endpoint that has a
-- cursor keeps it.
--
-- :endpoint        the webhook endpoint (its URL)
-- :from_beginning  1: from the first event; 0: only events after now
INSERT INTO webhook_cursors (endpoint, last_event_id)
VALUES (
    :endpoint,
    CASE WHEN :from_beginning::bigint = 1 THEN 0
         ELSE coalesce((SELECT event_id FROM events WHERE position IS NOT NULL
                        ORDER BY position DESC LIMIT 1), 0)
    END
)
ON CONFLICT (endpoint) DO NOTHING
