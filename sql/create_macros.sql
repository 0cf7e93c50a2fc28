-- Tag keys compare case-insensitively with '-', ' ', ':' as '_' and AWS's user_/user: prefix ignored.
create or replace macro normalize_tag_key(tag_key) as
    regexp_replace(regexp_replace(lower(trim(tag_key)), '[-\s:]', '_', 'g'), '^user_', '');

-- A resource id as ARNs and bare ids both reduce to it, so CUR lines and Tagging API ARNs join:
-- arn:aws:s3:::bucket → bucket; arn:…:instance/i-0abc → i-0abc; a bare id stays as it is.
create or replace macro normalize_resource_id(resource_id) as
    case
        when resource_id is null then null
        when resource_id like 'arn:%:s3:::%' then split_part(resource_id, ':::', 2)
        when resource_id like 'arn:%/%' then regexp_extract(resource_id, '/([^/]+)$', 1)
        when resource_id like 'arn:%' then regexp_extract(resource_id, ':([^:]+)$', 1)
        else resource_id
    end;
