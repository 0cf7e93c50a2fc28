delete from run_registry
