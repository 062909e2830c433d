"""Print the text of each page of a PDF (needs the `pypdf` package)."""

import sys

from pypdf import PdfReader

for number, page in enumerate(PdfReader(sys.argv[1]).pages, start=1):
    print(f"--- page {number} ---")
    print(page.extract_text() or "(no text layer)")
