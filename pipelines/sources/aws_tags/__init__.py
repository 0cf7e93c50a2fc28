"""`aws_tags`: resource tags from the AWS Resource Groups Tagging API, not billing.

settings.py (`AwsTagsSource`). Its reader is the tag snapshot asset (`pipelines/tags/`), which
appends one dated snapshot per source to `resource_tag_snapshots`.
"""

from pipelines.sources.aws_tags.settings import AwsTagsSource
from pipelines.sources.kind import SourceKind

KIND = SourceKind(
    name="aws_tags",
    settings=AwsTagsSource,
    description="resource tags from the Resource Groups Tagging API, one dated snapshot per run in "
    "`resource_tag_snapshots`",
)
