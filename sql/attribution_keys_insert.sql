insert into attribution_keys values ($dimension, $tag_key, $priority)
