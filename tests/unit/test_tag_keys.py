"""Tag keys as attribution compares them (`normalize_tag_key`): the spellings providers write for
the same key reduce to one, AWS's user tag prefix and GKE's pod label prefix dropped."""

from collections.abc import Iterator

import duckdb
import pytest

from tests.support.lake import memory_warehouse


@pytest.fixture(scope="module")
def macros() -> Iterator[duckdb.DuckDBPyConnection]:
    conn = memory_warehouse()
    yield conn
    conn.close()


@pytest.mark.parametrize(
    ("tag_key", "normalized"),
    [
        ("training_run", "training_run"),
        ("user:Training-Run", "training_run"),  # legacy CUR CSV
        ("user_training_run", "training_run"),  # CUR 2.0 resource_tags, legacy CUR Parquet
        ("k8s-label/training_run", "training_run"),  # GKE cost allocation: a pod label
        ("K8S-Label/Training-Run", "training_run"),
        (" k8s-label/team ", "team"),
        ("k8s-namespace", "k8s_namespace"),  # GKE's own labels keep their prefix
        ("goog-k8s-cluster-name", "goog_k8s_cluster_name"),
        ("aws:eks:cluster-name", "aws_eks_cluster_name"),
        ("team/k8s-label/x", "team/k8s_label/x"),  # only a leading prefix is dropped
        ("user:k8s-label/run", "k8s_label/run"),  # and only one
    ],
)
def test_provider_spellings_of_a_key_compare_equal(
    macros: duckdb.DuckDBPyConnection, tag_key: str, normalized: str
) -> None:
    assert macros.execute("select normalize_tag_key($key)", {"key": tag_key}).fetchone() == (normalized,)
