-- Empties run_events before the events of every configured source are inserted again.
delete from run_events
