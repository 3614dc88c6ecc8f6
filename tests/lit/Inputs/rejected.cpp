// g++ 12 accepts this template (it checks `this->block_id` only when the
// template is instantiated, and it never is); clang++ rejects it at its
// definition, as RAJA's Tile.hpp in Kripke.
template <typename Iterable> struct IterableTiler {
  Iterable it;
  int size() const { return this->block_id * 2; }
};

int main() { return 0; }
