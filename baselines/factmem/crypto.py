"""Value encryption for the fact layer: AES-256-GCM with a key kept in a local file.

The seed keeps the key in the Android Keystore / iOS Secure Enclave so it never leaves the TEE.
This baseline runs on a plain machine and does NOT pretend to have one: the key is 32 random bytes
in a file created with 0600 permissions next to the database. Anyone who can read that file can
decrypt the store; the encryption protects a copied database, not a compromised account. The seed's
second layer (mixing ciphertext with the device id) is not reproduced: the device id is not secret,
so it adds obfuscation, not security.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

NONCE_BYTES = 12  # 96-bit random nonce per value, the size GCM is specified for
KEY_BYTES = 32


def load_or_create_key(path: Path) -> bytes:
    """Read the key file, or create it (mode 0600, never overwriting) with a fresh random key."""
    if path.exists():
        key = path.read_bytes()
        if len(key) != KEY_BYTES:
            raise ValueError(f"{path} does not hold a {KEY_BYTES}-byte key")
        return key
    key = AESGCM.generate_key(bit_length=KEY_BYTES * 8)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key)
    os.chmod(path, 0o600)  # the umask can only narrow the mode; this makes the intent explicit
    return key


def encrypt(key: bytes, plaintext: str, associated: bytes) -> bytes:
    """nonce ‖ ciphertext ‖ 16-byte tag. `associated` (the fact key) is authenticated, not stored,
    so a ciphertext moved to another key's row fails to decrypt."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, plaintext.encode("utf-8"), associated)


def decrypt(key: bytes, blob: bytes, associated: bytes) -> str:
    """Inverse of `encrypt`; raises cryptography.exceptions.InvalidTag for a wrong key or tampered blob."""
    nonce, body = blob[:NONCE_BYTES], blob[NONCE_BYTES:]
    return AESGCM(key).decrypt(nonce, body, associated).decode("utf-8")
