-- Synthetic CUR 2.0 line items of one billing period, rows [$first_row, $last_row) of $period_rows.
-- Deterministic: every value derives from the row number through hash(), no random state.
-- Mix per 10,000 rows: 4,500 GPU instance-hours (on demand, Savings-Plan-covered, RI, negations),
-- 2,000 EBS volume, 1,500 S3 storage, 1,980 data transfer, 10 SP/RI fees, 8 other fees, 2 tax.
-- Resources: $resources of them, each used by one of $runs runs; 70 % carry a training-run tag,
-- 20 % are named after a run (the registry's globs), 10 % belong to nobody.
with numbered as (
    select
        rows.i as row_number,
        hash(rows.i, $seed) % 10000 as kind_draw,
        hash(rows.i, $seed + 1) % $resources as resource_number,
        hash(rows.i, $seed + 2) % 1000 as amount_draw,
        (rows.i * $hours_in_period) // $period_rows as hour_number
    from range($first_row, $last_row) as rows(i)
),

kinds as (
    select
        *,
        resource_number % $runs as run_number,
        (resource_number // $runs) % 10 as tagging_draw,
        case
            when kind_draw < 3000 then 'gpu_usage'
            when kind_draw < 3800 then 'gpu_sp_covered'
            when kind_draw < 4200 then 'gpu_ri'
            when kind_draw < 4500 then 'gpu_sp_negation'
            when kind_draw < 6500 then 'ebs'
            when kind_draw < 8000 then 's3'
            when kind_draw < 9980 then 'transfer'
            when kind_draw < 9985 then 'sp_fee'
            when kind_draw < 9990 then 'ri_fee'
            when kind_draw < 9998 then 'fee'
            else 'tax'
        end as kind
    from numbered
),

priced as (
    select
        *,
        $period_start + to_hours(hour_number) as usage_start,
        kind in ('gpu_usage', 'gpu_sp_covered', 'gpu_ri', 'gpu_sp_negation') as is_gpu,
        case
            when kind in ('gpu_usage', 'gpu_sp_covered', 'gpu_ri', 'gpu_sp_negation') then 1.0
            when kind = 'ebs' then 0.5 + amount_draw / 100.0
            when kind = 's3' then 10.0 + amount_draw
            when kind = 'transfer' then 1.0 + amount_draw / 10.0
            else 1.0
        end as usage_amount,
        case
            when kind in ('gpu_usage', 'gpu_sp_covered', 'gpu_ri', 'gpu_sp_negation') then 98.32
            when kind = 'ebs' then 0.0001095890
            when kind = 's3' then 0.0000315068
            when kind = 'transfer' then 0.02
            when kind in ('sp_fee', 'ri_fee') then 40.0 + amount_draw / 10.0
            when kind = 'fee' then 5.0 + amount_draw / 100.0
            else 12.5 + amount_draw / 100.0
        end as rate
    from kinds
),

resourced as (
    select
        *,
        case
            when kind in ('sp_fee', 'ri_fee', 'fee', 'tax') then null
            when is_gpu or kind = 'transfer'
                then 'i-' || lpad(run_number::varchar, 3, '0') || 'x' || lpad(to_hex(resource_number), 12, '0')
            when kind = 'ebs'
                then 'vol-' || lpad(run_number::varchar, 3, '0') || 'x' || lpad(to_hex(resource_number), 12, '0')
            else 'arn:aws:s3:::bench-' || lpad(run_number::varchar, 3, '0') || '-' || to_hex(resource_number)
        end as resource_id,
        round(usage_amount * rate, 10) as list_cost
    from priced
),

final as (
    select
        'Anniversary' as bill_bill_type,
        'AWS' as bill_billing_entity,
        $period_start as bill_billing_period_start_date,
        $period_end as bill_billing_period_end_date,
        null::varchar as bill_invoice_id,
        'Amazon Web Services, Inc.' as bill_invoicing_entity,
        '111122223333' as bill_payer_account_id,
        'RunLedger Bench Org' as bill_payer_account_name,
        map {'environment': 'production'} as cost_category,
        map([]::varchar[], []::double[]) as discount,
        'bench' || $period_key || to_hex(row_number) as identity_line_item_id,
        strftime(usage_start, '%Y-%m-%dT%H:%M:%SZ') || '/'
            || strftime(usage_start + interval 1 hour, '%Y-%m-%dT%H:%M:%SZ') as identity_time_interval,
        case when is_gpu then 'us-east-1a' end as line_item_availability_zone,
        list_cost as line_item_blended_cost,
        rate::varchar as line_item_blended_rate,
        'USD' as line_item_currency_code,
        'Amazon Web Services, Inc.' as line_item_legal_entity,
        case kind
            when 'gpu_usage' then '$98.32 per On Demand Linux p5.48xlarge Instance Hour'
            when 'gpu_sp_covered' then 'Compute Savings Plan covered usage of p5.48xlarge'
            when 'gpu_ri' then 'Reserved p5.48xlarge instance-hour'
            when 'gpu_sp_negation' then 'Savings Plan negation of p5.48xlarge usage'
            when 'ebs' then '$0.08 per GB-month of General Purpose (gp3) provisioned storage'
            when 's3' then '$0.023 per GB - first 50 TB / month of storage used'
            when 'transfer' then '$0.02 per GB - US East (N. Virginia) data transfer to US West (Oregon)'
            when 'sp_fee' then 'Savings Plan recurring fee'
            when 'ri_fee' then 'Reserved instance recurring fee'
            when 'fee' then 'AWS Support (Business)'
            else 'Tax for product code AmazonEC2'
        end as line_item_line_item_description,
        case kind
            when 'gpu_usage' then 'Usage'
            when 'gpu_sp_covered' then 'SavingsPlanCoveredUsage'
            when 'gpu_ri' then 'DiscountedUsage'
            when 'gpu_sp_negation' then 'SavingsPlanNegation'
            when 'sp_fee' then 'SavingsPlanRecurringFee'
            when 'ri_fee' then 'RIFee'
            when 'fee' then 'Fee'
            when 'tax' then 'Tax'
            else 'Usage'
        end as line_item_line_item_type,
        case
            when kind = 'gpu_ri' then 0.0
            when kind = 'gpu_sp_negation' then -list_cost
            else list_cost
        end as line_item_net_unblended_cost,
        rate::varchar as line_item_net_unblended_rate,
        case when is_gpu then 96.0::double end as line_item_normalization_factor,
        case when is_gpu then 96.0::double * usage_amount end as line_item_normalized_usage_amount,
        case
            when is_gpu then 'RunInstances'
            when kind = 'transfer' then 'InterRegion-Out'
            else 'Usage'
        end as line_item_operation,
        case
            when kind in ('ebs', 'gpu_usage', 'gpu_sp_covered', 'gpu_ri', 'gpu_sp_negation', 'ri_fee', 'tax')
                then 'AmazonEC2'
            when kind = 's3' then 'AmazonS3'
            when kind = 'transfer' then 'AWSDataTransfer'
            when kind = 'sp_fee' then 'ComputeSavingsPlans'
            else 'AWSSupportBusiness'
        end as line_item_product_code,
        resource_id as line_item_resource_id,
        case when kind = 'tax' then 'US Sales Tax' end as line_item_tax_type,
        case
            when kind = 'gpu_ri' then 0.0
            when kind = 'gpu_sp_negation' then -list_cost
            else list_cost
        end as line_item_unblended_cost,
        rate::varchar as line_item_unblended_rate,
        '4444' || lpad((resource_number % 40)::varchar, 8, '0') as line_item_usage_account_id,
        'ml-training-' || (resource_number % 40) as line_item_usage_account_name,
        usage_amount as line_item_usage_amount,
        usage_start + interval 1 hour as line_item_usage_end_date,
        usage_start as line_item_usage_start_date,
        case
            when is_gpu then 'USE1-BoxUsage:p5.48xlarge'
            when kind = 'ebs' then 'USE1-EBS:VolumeUsage.gp3'
            when kind = 's3' then 'USE1-TimedStorage-ByteHrs'
            when kind = 'transfer' then 'USE1-USW2-AWS-Out-Bytes'
        end as line_item_usage_type,
        'USD' as pricing_currency,
        list_cost as pricing_public_on_demand_cost,
        rate::varchar as pricing_public_on_demand_rate,
        case
            when kind = 'gpu_ri' then 'Reserved'
            when kind in ('sp_fee', 'ri_fee', 'fee', 'tax') then null
            else 'OnDemand'
        end as pricing_term,
        case
            when is_gpu then 'Hrs'
            when kind in ('ebs', 's3') then 'GB-Mo'
            when kind = 'transfer' then 'GB'
        end as pricing_unit,
        -- map(keys, values) rather than `map {...}` literals: sqlfluff parses those only outside a case
        case
            when is_gpu then map(
                ['product_name', 'instance_type', 'region'],
                ['Amazon Elastic Compute Cloud', 'p5.48xlarge', 'us-east-1']
            )
            when kind = 's3' then map(['product_name', 'region'], ['Amazon Simple Storage Service', 'us-east-1'])
            when kind = 'ebs' then map(['product_name', 'region'], ['Amazon Elastic Compute Cloud', 'us-east-1'])
            else map(['region'], ['us-east-1'])
        end as product,
        case when kind = 'transfer' then 'us-east-1' end as product_from_region_code,
        case when is_gpu then 'p5.48xlarge' end as product_instance_type,
        case
            when is_gpu then 'Compute Instance'
            when kind in ('ebs', 's3') then 'Storage'
            when kind = 'transfer' then 'Data Transfer'
        end as product_product_family,
        'us-east-1' as product_region_code,
        case
            when kind in ('ebs', 'gpu_usage', 'gpu_sp_covered', 'gpu_ri', 'gpu_sp_negation', 'ri_fee', 'tax')
                then 'AmazonEC2'
            when kind = 's3' then 'AmazonS3'
            when kind = 'transfer' then 'AWSDataTransfer'
            when kind = 'sp_fee' then 'ComputeSavingsPlans'
            else 'AWSSupportBusiness'
        end as product_servicecode,
        case
            when is_gpu then 'BENCHSKUP5'
            when kind = 'ebs' then 'BENCHSKUGP3'
            when kind = 's3' then 'BENCHSKUS3'
        end as product_sku,
        case when kind = 'transfer' then 'us-west-2' end as product_to_region_code,
        case when kind = 'ri_fee' then round(list_cost * 0.3, 10) end
            as reservation_amortized_upfront_fee_for_billing_period,
        case when kind = 'gpu_ri' then round(list_cost * 0.62, 10) end as reservation_effective_cost,
        case
            when kind in ('gpu_ri', 'ri_fee')
                then 'arn:aws:ec2:us-east-1:444455556666:reserved-instances/bench-' || (resource_number % 8)
        end as reservation_reservation_a_r_n,
        case when kind = 'ri_fee' then round(list_cost * 0.05, 10) end
            as reservation_unused_amortized_upfront_fee_for_billing_period,
        case when kind = 'ri_fee' then round(list_cost * 0.02, 10) end as reservation_unused_recurring_fee,
        case
            when tagging_draw < 7 and resource_id is not null then map(
                [
                    'user_training_run', 'user_experiment', 'user_dataset_version', 'user_owner', 'user_cost_center',
                    'aws_createdBy'
                ],
                [
                    'run-' || lpad(run_number::varchar, 3, '0'),
                    'exp-' || (run_number // 4),
                    'dataset-v' || (run_number % 13),
                    'team-' || (run_number % 17),
                    'cc-' || (run_number % 9),
                    'AssumedRole:ml-orchestrator'
                ]
            )
            when resource_id is not null then map(['user_cost_center'], ['cc-' || (run_number % 9)])
            else map([]::varchar[], []::varchar[])
        end as resource_tags,
        case
            when kind in ('gpu_sp_covered', 'gpu_sp_negation', 'sp_fee')
                then 'arn:aws:savingsplans::444455556666:savingsplan/bench-' || (resource_number % 4)
        end as savings_plan_savings_plan_a_r_n,
        case when kind = 'gpu_sp_covered' then round(list_cost * 0.55, 10) end
            as savings_plan_savings_plan_effective_cost,
        case when kind = 'sp_fee' then list_cost end as savings_plan_total_commitment_to_date,
        case when kind = 'sp_fee' then round(list_cost * 0.9, 10) end as savings_plan_used_commitment,
        case when kind in ('gpu_sp_covered', 'gpu_sp_negation', 'sp_fee') then 'ComputeSavingsPlans' end
            as savings_plan_offering_type,
        case
            when kind in ('gpu_ri', 'ri_fee') then 'Reserved'
            when resource_id is not null then 'OnDemand'
        end as pricing_rate_code,
        case when resource_id is not null then 'BENCHRATE' || (kind_draw % 97) end as pricing_rate_id,
        case when kind in ('gpu_ri', 'ri_fee') then '8' end as reservation_total_reserved_units
    from resourced
)

select * from final
