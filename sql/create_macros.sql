-- Tag keys compare case-insensitively with '-', ' ', ':' as '_' and AWS's user_/user: prefix ignored.
create or replace macro normalize_tag_key(tag_key) as
    regexp_replace(regexp_replace(lower(trim(tag_key)), '[-\s:]', '_', 'g'), '^user_', '')
