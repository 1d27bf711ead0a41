"""Test data shared by the unit tests of the book's tables and chapters."""

from mobitrace.core import claims as cl


def three_claims():
    """A claims frame with one claim of each verdict; the first claim's text
    carries markup that must show literally."""
    row = dict(study="s", location="§1", unit="%", tolerance="t", basis="b", provenance="measured", section="s-x")
    return cl.claims_frame([
        {**row, "claim_id": "a", "claim": "CPU < 50% <script>", "paper_relation": "<", "paper_value": 50.0,
         "artifact_value": 36.04, "verdict": cl.REPRODUCED},
        {**row, "claim_id": "b", "claim": "gain 4x", "paper_relation": "~", "paper_value": 4.0,
         "artifact_value": 3.36, "unit": "x", "verdict": cl.NOT_REPRODUCED},
        {**row, "claim_id": "c", "claim": "from figures", "paper_relation": None, "paper_value": None,
         "artifact_value": None, "verdict": cl.NOT_CHECKABLE},
    ])
