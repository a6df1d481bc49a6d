"""Reference targets for certpeek: what a round-two ``assay init`` should write (issue 42).

One target per public function of the single module, bytes passed as bytes, the
documented ``CertificateError`` (a plain ``Exception`` subclass) as the contract.
"""

from pathlib import Path

import certpeek
from certpeek import CertificateError

import assay

SAMPLES = Path(certpeek.__file__).resolve().parent / "samples"
SEEDS = [p.read_bytes() for p in sorted(SAMPLES.glob("*.der"))]


@assay.target(expected=(CertificateError,), seeds=SEEDS)
def certificate_subject(data: bytes) -> None:
    certpeek.certificate_subject(data)


@assay.target(expected=(CertificateError,), seeds=SEEDS)
def key_algorithm(data: bytes) -> None:
    certpeek.key_algorithm(data)


@assay.target(
    expected=(CertificateError,), seeds=[b"-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n"]
)
def unarmor_pem(data: bytes) -> None:
    certpeek.unarmor_pem(data.decode("latin-1"))
