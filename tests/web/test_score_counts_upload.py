"""The score-count layout through the dashboard (issue 15, item 3): an aggregate uploaded (or
pushed) gives exactly what the row-level file it summarises gives."""

from __future__ import annotations

import io

import numpy as np

import costdash


def test_an_uploaded_aggregate_gives_the_row_files_exports(client, tmp_path):
    rng = np.random.default_rng(11)
    n = 3000
    y = rng.integers(0, 2, n)
    rows = tmp_path / "rows.csv"
    # Rounded scores: many ties, as in real score files.
    a = np.round(rng.random(n) + 0.4 * y, 2)
    b = np.round(rng.random(n) + 0.2 * y, 3)
    rows.write_text("y_true,a,b\n" + "\n".join(f"{y[i]},{a[i]},{b[i]}" for i in range(n)))
    counts = tmp_path / "counts.csv"
    costdash.aggregate(str(rows)).write(counts)

    def upload(path):
        reply = client.post("/api/v1/datasets", data={"file": (io.BytesIO(path.read_bytes()),
                                                                path.name)},
                            content_type="multipart/form-data")
        assert reply.status_code == 200, reply.get_json()
        return reply.get_json()

    row_set, count_set = upload(rows), upload(counts)
    assert count_set["n"] == row_set["n"] == n
    query = "?p_pos=0.2&cost_fn=5&cost_fp=1"
    for name in ("hull", "envelope", "operating_ranges"):
        got = [client.get(f"/api/v1/datasets/{d['id']}/{name}.csv{query}").get_data(as_text=True)
               for d in (row_set, count_set)]
        assert got[0] == got[1], name
    decisions = [client.get(f"/api/v1/datasets/{d['id']}/decision.json{query}").get_json()
                 for d in (row_set, count_set)]
    assert decisions[0]["decision"] == decisions[1]["decision"]
    assert decisions[0]["policy"] == decisions[1]["policy"]
