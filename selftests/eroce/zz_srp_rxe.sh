#!/bin/bash
# vm-timeout: 600
SRP_MODE=rxe exec bash "$(dirname "$0")/zz_srp.sh"
