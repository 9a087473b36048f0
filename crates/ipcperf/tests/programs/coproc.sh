# A bash coprocess: 25 requests of 100 B on its standard input, each answered
# with 300 B on its standard output before the next is sent.
coproc W { while IFS= read -r l; do printf '%0299d\n' 0; done; }
for ((i = 0; i < 25; i++)); do
  printf '%099d\n' "$i" >&"${W[1]}"
  IFS= read -r a <&"${W[0]}"
done
