-- Every training run with attributed spend in the warehouse (`runledger check`).
select distinct training_run
from cost_allocations
where training_run is not null
order by training_run
