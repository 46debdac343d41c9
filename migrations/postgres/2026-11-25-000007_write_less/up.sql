-- Every index is written by every lock taken, and renewing a lock rewrites
-- the entries of the columns it changes (on PostgreSQL, an indexed column
-- changed rules out a heap-only update). Keep only what a query looks up:
-- the reaper reads every live lock anyway (the table holds live locks
-- only), and a user's locks are looked up only when an admin removes the
-- user. The outbox is pruned by id (ids grow with time).
DROP INDEX index_locks_on_user_id;
DROP INDEX index_locks_on_expires_at;
DROP INDEX index_locks_on_last_activity_at;
DROP INDEX index_event_outbox_on_created_at;

-- The guarded card save's fast path (PostgreSQL): one call that saves a
-- card's content or position when nothing stands in the way, and returns
-- the saved row; otherwise it writes nothing and returns no row, and the
-- general path decides (401, 403, 404, 412, 423, an overdue lock). It is
-- the guard's rules restated (`crate::locks::guard`), in the guard's order:
-- the card's row first, so that it comes after a lock being taken on the
-- card (a row another transaction holds is left to the general path); then, each statement with a fresh snapshot (a VOLATILE function),
-- the caller's live token and role, the card's lock (read FOR SHARE), no
-- deep lock in the case, the card's lock held by the caller's tab and in
-- force (or no lock), `Lock-Token` and `If-Match`. The
-- lock's lease and activity are renewed as a save renews them, and the
-- outbox row carries the saved row for every instance's listener to render.
-- Times are the database's clock, as everywhere on PostgreSQL.
CREATE FUNCTION baton_fast_card_update(
  p_card BIGINT,
  p_user BIGINT,
  p_token BIGINT,
  p_session TEXT,
  p_lock_token BIGINT,
  p_if_match BIGINT,
  p_content TEXT,
  p_position INTEGER,
  p_ttl_micros BIGINT,
  p_idle_micros BIGINT,
  p_editor_roles TEXT[]
) RETURNS SETOF cards
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_now TIMESTAMP := now() AT TIME ZONE 'UTC';
  card cards;
  held locks;
BEGIN
  -- A card (or, below, a lock) whose row another transaction holds is
  -- left to the general path: it waits in a transaction of its own, which
  -- it rolls back if it gives up (503 "nothing was changed"), where this
  -- call, committing on its own, could only say "it may have been saved".
  SELECT * INTO card FROM cards WHERE id = p_card FOR NO KEY UPDATE SKIP LOCKED;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  PERFORM 1 FROM auth_tokens t JOIN users u ON u.id = t.user_id
   WHERE t.id = p_token AND u.id = p_user AND t.revoked_at IS NULL
     AND t.expires_at > v_now AND u.deactivated_at IS NULL
     AND (u.admin OR EXISTS (
       SELECT 1 FROM memberships m
        WHERE m.case_id = card.case_id AND m.user_id = u.id AND m.role = ANY (p_editor_roles)));
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT * INTO held FROM locks l
   WHERE l.lockable_type = 'Card' AND l.lockable_id = p_card FOR SHARE SKIP LOCKED;
  IF NOT FOUND THEN
    PERFORM 1 FROM locks l WHERE l.lockable_type = 'Card' AND l.lockable_id = p_card;
    IF FOUND THEN
      RETURN;
    END IF;
  END IF;
  -- After the card's lock (as the guard reads them): a deep takeover that
  -- ended the card's lock is seen here with the deep lock it took.
  PERFORM 1 FROM locks d WHERE d.case_id = card.case_id AND d.deep;
  IF FOUND THEN
    RETURN;
  END IF;
  IF held.id IS NOT NULL THEN
    IF held.user_id <> p_user
       OR NOT (p_session IS NULL OR held.session_id IS NULL OR held.session_id = p_session)
       OR held.expires_at <= v_now
       OR held.last_activity_at <= v_now - p_idle_micros * INTERVAL '1 microsecond'
       OR (p_lock_token IS NOT NULL AND p_lock_token <> held.id) THEN
      RETURN;
    END IF;
  ELSIF p_lock_token IS NOT NULL THEN
    RETURN;
  END IF;
  IF p_if_match IS NOT NULL AND p_if_match <> card.version THEN
    RETURN;
  END IF;
  UPDATE cards
     SET content = COALESCE(p_content, content),
         position = COALESCE(p_position, position),
         version = version + 1,
         updated_at = v_now
   WHERE id = p_card
  RETURNING * INTO card;
  IF held.id IS NOT NULL THEN
    UPDATE locks
       SET expires_at = v_now + p_ttl_micros * INTERVAL '1 microsecond', last_activity_at = v_now
     WHERE id = held.id;
  END IF;
  INSERT INTO event_outbox (payload, created_at)
  VALUES (json_build_object(
            'k', 'card',
            'editor', p_session,
            'at', (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT,
            'card', row_to_json(card))::TEXT,
          v_now);
  RETURN NEXT card;
END
$$;
