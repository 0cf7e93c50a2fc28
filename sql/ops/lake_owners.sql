-- lake_owners: the configuration that owns the lake and its billing sources.

-- name: owners
-- Every owner row: the lake's (source_name NULL) first.
select source_name, configuration, claimed_at
from lake_owners
order by source_name nulls first;

-- name: forget
-- Every owner row, before another configuration takes the lake over.
delete from lake_owners;

-- name: claim
-- Records the configuration owning the lake (source_name NULL) or one of its billing sources.
insert into lake_owners (source_name, configuration, claimed_at)
values ($source_name, $configuration, $claimed_at);
