"""Look inside certificates and keys users upload: who a certificate names, what a key is."""

from __future__ import annotations

from typing import Any

from asn1crypto import keys, pem, x509


class CertificateError(Exception):
    """The upload is not a well-formed certificate, key or PEM block."""


def certificate_subject(der: bytes) -> dict[str, Any]:
    """The subject of a DER encoded X.509 certificate, as a mapping of name parts.

    Raises:
        CertificateError: the bytes are not a well-formed certificate.
    """
    try:
        cert = x509.Certificate.load(der)
        return dict(cert.subject.native)
    except ValueError as e:
        raise CertificateError(f"not a certificate: {e}") from e


def key_algorithm(der: bytes) -> str:
    """The algorithm (``rsa``, ``ec``, ...) of a DER encoded PKCS#8 private key.

    Raises:
        CertificateError: the bytes are not a well-formed private key.
    """
    try:
        return keys.PrivateKeyInfo.load(der).algorithm
    except ValueError as e:
        raise CertificateError(f"not a private key: {e}") from e


def unarmor_pem(text: str) -> tuple[str, bytes]:
    """The type (``CERTIFICATE``, ...) and DER bytes of the first PEM block in ``text``.

    Raises:
        CertificateError: the text holds no well-formed PEM block.
    """
    try:
        kind, _headers, der = pem.unarmor(text.encode("ascii"))
    except (ValueError, UnicodeEncodeError) as e:
        raise CertificateError(f"not PEM: {e}") from e
    return kind, der
