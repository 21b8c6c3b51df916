"""The seam as a protocol: any implementation, in any language, judged through JSON lines on a
child process's stdin and stdout (``--sut 'stdio:COMMAND'``). docs/seam-protocol.md writes it out."""

from pwh._suts.stdio.client import StdioSUT
from pwh._suts.stdio.protocol import PROTOCOL, ProtocolError

__all__ = ["PROTOCOL", "ProtocolError", "StdioSUT"]
