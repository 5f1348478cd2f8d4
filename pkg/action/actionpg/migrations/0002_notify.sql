-- Change notifications for readers that cache (dome serve): every committed
-- INSERT, UPDATE or DELETE of action_versions, and a TRUNCATE, notifies the
-- channel dome_action_versions with the payload "<name>@<version>" (for a
-- TRUNCATE "*"). PostgreSQL delivers notifications when the transaction
-- commits, to every session that LISTENs (Store.Watch).

CREATE FUNCTION dome_action_versions_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('dome_action_versions', '*');
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('dome_action_versions', OLD.name || '@' || OLD.version);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('dome_action_versions', NEW.name || '@' || NEW.version);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER action_versions_notify
    AFTER INSERT OR UPDATE OR DELETE ON action_versions
    FOR EACH ROW EXECUTE FUNCTION dome_action_versions_notify();

CREATE TRIGGER action_versions_notify_truncate
    AFTER TRUNCATE ON action_versions
    FOR EACH STATEMENT EXECUTE FUNCTION dome_action_versions_notify();
