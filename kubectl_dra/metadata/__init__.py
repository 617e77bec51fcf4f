"""The DRA device metadata protocol (KEP-5304): the in-container file layout, decoding
the versioned JSON stream, merging drivers' files, protocol checks and the metadata a
claim's allocation should produce. Pure: callers hand in file contents."""

from .protocol import (
    CONTAINER_DIR,
    GROUP,
    KIND,
    KNOWN_VERSIONS,
    FILE_SUFFIX,
    RESOURCE_CLAIMS_SUBDIR,
    RESOURCE_CLAIM_TEMPLATES_SUBDIR,
    DecodedStream,
    MetadataLocation,
    base_request,
    claim_file_path,
    decode_stream,
    merge_requests,
    parse_location,
    template_file_path,
)
from .check import Violation, check_file
from .expected import ExpectedFile, Difference, claim_directory, compare_expected, expected_files

__all__ = [
    "CONTAINER_DIR", "GROUP", "KIND", "KNOWN_VERSIONS", "FILE_SUFFIX", "RESOURCE_CLAIMS_SUBDIR",
    "RESOURCE_CLAIM_TEMPLATES_SUBDIR", "DecodedStream", "MetadataLocation", "base_request",
    "claim_file_path", "decode_stream", "merge_requests", "parse_location", "template_file_path",
    "Violation", "check_file", "ExpectedFile", "Difference", "claim_directory", "compare_expected", "expected_files",
]
