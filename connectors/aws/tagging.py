"""Resource tags from the AWS Resource Groups Tagging API (`GetResources`), region by region.

`GetResources` is regional and paginated: pages are read until `PaginationToken` is empty (what
AWS returns on the last page) or absent. Keys come back raw (`Cost Center`), without the
`user:` prefix the CUR adds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from connectors.aws.settings import AWS_MAX_ATTEMPTS, AWS_RETRY_MODE, TAGGING_PAGE_SIZE
from connectors.errors import SourceError


@dataclass(frozen=True)
class TaggedResource:
    """One resource as the Tagging API returns it."""

    region: str
    resource_arn: str
    tags: dict[str, str]


def tagging_client(region: str, endpoint_url: str | None) -> Any:
    """A `resourcegroupstaggingapi` client from the standard credential chain, retrying throttling."""
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "resourcegroupstaggingapi",
        region_name=region,
        endpoint_url=endpoint_url,
        config=Config(retries={"mode": AWS_RETRY_MODE, "max_attempts": AWS_MAX_ATTEMPTS}),
    )


def region_resources(region: str, endpoint_url: str | None = None) -> Iterator[TaggedResource]:
    """Every resource `GetResources` returns in one region, page by page.

    Raises:
        SourceError: naming the region when the API refuses or cannot be reached.
    """
    from botocore.exceptions import BotoCoreError, ClientError

    client = tagging_client(region, endpoint_url)
    token = ""
    while True:
        request = {"ResourcesPerPage": TAGGING_PAGE_SIZE, **({"PaginationToken": token} if token else {})}
        try:
            page = client.get_resources(**request)
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "error")
            message = error.response.get("Error", {}).get("Message", "")
            raise SourceError(f"tag:GetResources in region {region}: {code} {message}".rstrip()) from None
        except BotoCoreError as error:
            raise SourceError(f"tag:GetResources in region {region}: {error}") from None
        for mapping in page.get("ResourceTagMappingList", []):
            tags = {tag["Key"]: tag.get("Value", "") for tag in mapping.get("Tags", [])}
            yield TaggedResource(region, mapping["ResourceARN"], tags)
        token = page.get("PaginationToken") or ""
        if not token:
            return


def tagged_resources(regions: Sequence[str], endpoint_url: str | None = None) -> Iterator[TaggedResource]:
    """Every resource of every region, each ARN once (global resources such as S3 buckets can be
    returned by several regions: the first region listed keeps them)."""
    seen: set[str] = set()
    for region in regions:
        for resource in region_resources(region, endpoint_url):
            if resource.resource_arn not in seen:
                seen.add(resource.resource_arn)
                yield resource
