"""The classroom's doors: the teacher's sign-in and the join link (LAN address, QR code) phones open."""
