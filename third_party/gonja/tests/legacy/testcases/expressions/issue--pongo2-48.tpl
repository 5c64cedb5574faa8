https://github.com/flosch/pongo2/issues/48 (associativity for infix operators)
{{ 34 // 3 * 3 }}
{{ 34 / 3 * 3 }}
{{ 10 + 24 / 6 / 2 }}
{{ 6 - 4 - 2 }}
