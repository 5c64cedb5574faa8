package jinja

import (
	"strings"
	"testing"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

// render renders src with Salt's filters, tests and globals.
func render(t *testing.T, src string, vars map[string]any) (string, error) {
	t.Helper()
	filters := exec.NewFilterSet(map[string]exec.FilterFunction{})
	filters.Update(builtins.Filters)
	for name, f := range Filters() {
		if filters.Exists(name) {
			_ = filters.Replace(name, f)
		} else {
			_ = filters.Register(name, f)
		}
	}
	env := &exec.Environment{
		Context:           exec.EmptyContext().Update(builtins.GlobalFunctions).Update(Globals()),
		Filters:           filters,
		Tests:             Tests(),
		ControlStructures: exec.NewControlStructureSet(Tags()).Update(builtins.ControlStructures),
		Methods:           Methods(),
	}
	loader, err := loaders.NewMemoryLoader(map[string]string{"/t": src})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := exec.NewTemplate("/t", config.New(), loader, env)
	if err != nil {
		return "", err
	}
	return tpl.ExecuteToString(exec.NewContext(vars))
}

// TestSaltFilters: each case's expected output is what Salt 3006.6
// renders for the same template (salt.utils.templates.render_jinja_tmpl).
func TestSaltFilters(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"{{ [1,2,3,4] | union([2,4,6]) }}", "[1, 2, 3, 4, 6]"},
		{"{{ [1,2,3,4] | intersect([2,4,6]) }}", "[2, 4]"},
		{"{{ [1,2,3,4] | difference([2,4,6]) }}", "[1, 3]"},
		{"{{ [1,2,3,4] | symmetric_difference([2,4,6]) }}", "[1, 3, 6]"},
		{"{{ ['a','b'] | union(['b','c']) | join(',') }}", "a,b,c"},
		{"{{ [1,2,3,4] | avg }}", "2.5"},
		{"{{ 5 | avg }}", "5.0"},
		{"{{ [1,2,3,4] | min }}", "1"},
		{"{{ [1,2,3,4] | max }}", "4"},
		{"{{ ['b','a'] | min }}", "a"},
		{"{{ [3, [4, 2] ] | flatten }}", "[3, 4, 2]"},
		{"{{ [3, [4, [2]] ] | flatten(levels=1) }}", "[3, 4, [2]]"},
		{"{{ [3, None, [4, [2]] ] | flatten(levels=1, preserve_nulls=True) }}", "[3, None, 4, [2]]"},
		{"{{ [3, None, 'None', 'null', [4, {'a': 1}]] | flatten }}", "[3, 4, 'a']"},
		{"{{ [1] | is_list }}", "True"},
		{"{{ 'a' | is_list }}", "False"},
		{"{{ 'a' | is_iter }}", "False"},
		{"{{ {'a': 1} | is_iter }}", "True"},
		{"{{ 3 | is_iter }}", "False"},
		{"{{ [0, 1, None, ''] | exactly_one_true }}", "True"},
		{"{{ [1, 1, 0] | exactly_n_true(2) }}", "True"},
		{"{{ [1, 1, 1] | exactly_n_true(2) }}", "False"},
		{"{{ [1,2,3] | compare_lists([2,3,4]) }}", "{'new': [4], 'old': [1]}"},
		{"{{ ['a', 'b'] | json_decode_list }}", "[b'a', b'b']"},
		{"{{ {'a': 'b'} | json_decode_dict }}", "{b'a': b'b'}"},
		{"{{ ['a', 'b'] | json_encode_list }}", "[b'a', b'b']"},
		{"{{ {'a': 'b'} | json_encode_dict }}", "{b'a': b'b'}"},
		{"{{ ['Foo', 'bar', 'foo', 'Bar'] | sorted_ignorecase }}", "['bar', 'Bar', 'Foo', 'foo']"},
		{"{{ 'ab' | substring_in_list(['xaby', 'c']) }}", "True"},
		{"{{ 'zz' | substring_in_list(['xaby', 'c']) }}", "False"},
		{"{{ {} | set_dict_key_value('a:b:c', 1) }}", "{'a': {'b': {'c': 1}}}"},
		{"{{ {'a': {'b': [1]}} | append_dict_key_value('a:b', 2) }}", "{'a': {'b': [1, 2]}}"},
		{"{{ {'a': {}} | append_dict_key_value('a:b', 2) }}", "{'a': {'b': [2]}}"},
		{"{{ {'a': {'b': [1]}} | extend_dict_key_value('a:b', [2, 3]) }}", "{'a': {'b': [1, 2, 3]}}"},
		{"{{ {'a': {'b': {'x': 1}}} | update_dict_key_value('a:b', {'y': 2}) }}", "{'a': {'b': {'x': 1, 'y': 2}}}"},
		{"{{ {'a': 1} | set_dict_key_value('a/b', 1, delimiter='/') }}", "{'a': {'b': 1}}"},
		{"{{ 'foo' | skip }}", ""},
		{"{{ 'a,b' | method_call('split', ',') }}", "['a', 'b']"},
		{"{{ [1,2,3] | random_sample(2, seed='x') }}", "[2, 3]"},
		{"{{ [1,2,3,4,5] | random_shuffle(seed='abc') }}", "[2, 4, 5, 3, 1]"},
		{"{{ 'hello' | sha256 }}", "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"},
		{"{{ 'hello' | sha512 }}", "9b71d224bd62f3785d96d46ad3ea3d73319bfbc2890caadae2dff72519673ca72323c3d99ba5c11d7c7acc6e14b8c5da0c4663475c2e5c3adef46f73bcdec043"},
		{"{{ 'hello' | md5 }}", "5d41402abc4b2a76b9719d911017c592"},
		{"{{ 'hello' | sha1 }}", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"},
		{"{{ 'hello' | base64_encode }}", "aGVsbG8="},
		{"{{ 'aGVsbG8=' | base64_decode }}", "hello"},
		{"{{ 'hello' | hmac('secret', 'iKqz7ejTrflNJquQ07r9SiCDBww7zOnAFO4EpEOEfAs=') }}", "True"},
		{"{{ 'hello' | hmac_compute('secret') }}", "88aab3ede8d3adf94d26ab90d3bafd4a2083070c3bcce9c014ee04a443847c0b"},
		{"{{ 'example' | uuid }}", "9ade8beb-355a-50d8-9011-1c99848a7719"},
		{"{{ '1' | to_num }}", "1"},
		{"{{ '1.5' | to_num }}", "1.5"},
		{"{{ 'x1' | to_num }}", "x1"},
		{"{{ '12' | str_to_num + 1 }}", "13"},
		{"{{ 'abc' | to_bytes }}", "b'abc'"},
		{"{{ 'camelCaseString' | to_snake_case }}", "camel_case_string"},
		{"{{ 'HTTPServerError' | to_snake_case }}", "http_server_error"},
		{"{{ 'snake_case_string' | to_camelcase }}", "snakeCaseString"},
		{"{{ 'snake_case_string' | to_camelcase(uppercamel=True) }}", "SnakeCaseString"},
		{"{{ '1K' | human_to_bytes }}", "1024"},
		{"{{ '1 MiB' | human_to_bytes }}", "1048576"},
		{"{{ '2KB' | human_to_bytes(handle_metric=True) }}", "2000"},
		{"{{ '2KB' | human_to_bytes }}", "2048"},
		{"{{ 'bogus' | human_to_bytes }}", "0"},
		{"{{ '0xff' | is_hex }}", "True"},
		{"{{ 'ff' | is_hex }}", "True"},
		{"{{ 'fg' | is_hex }}", "False"},
		{"{{ 'a b' | contains_whitespace }}", "True"},
		{"{{ 'ab' | contains_whitespace }}", "False"},
		{"{{ 'web1' | check_whitelist_blacklist(whitelist='web*') }}", "True"},
		{"{{ 'web1' | check_whitelist_blacklist(blacklist=['web*']) }}", "False"},
		{"{{ 'db1' | check_whitelist_blacklist(whitelist=['web.*'], blacklist=['x']) }}", "False"},
		{"{{ 'a.b*c' | regex_escape }}", "a\\.b\\*c"},
		{"{{ 'ABC' | regex_replace('b', 'x', ignorecase=True) }}", "AxC"},
		{"{{ ['/etc', 'salt', '/minion'] | join('|') | path_join }}", "/etc|salt|/minion"},
		{"{{ '/etc' | path_join('salt', '/minion') }}", "/etc/salt/minion"},
		{"{{ 'a/../b' | path_join('c//d') }}", "b/c/d"},
		{"{{ '1.2.3.4' | is_ip }}", "True"},
		{"{{ '::1' | is_ip }}", "True"},
		{"{{ 'x' | is_ip }}", "False"},
		{"{{ '1.2.3.4' | is_ipv4 }}", "True"},
		{"{{ '::1' | is_ipv4 }}", "False"},
		{"{{ '::1' | is_ipv6 }}", "True"},
		{"{{ '192.168.0.1' | is_ip(options='private') }}", "True"},
		{"{{ '8.8.8.8' | is_ip(options='private') }}", "False"},
		{"{{ '8.8.8.8' | is_ip(options='global') }}", "True"},
		{"{{ '127.0.0.1' | is_ipv4(options='loopback') }}", "True"},
		{"{{ '192.168.0.1/24' | ipv4 }}", "192.168.0.1/24"},
		{"{{ ['192.168.0.1', 'fe80::1', '8.8.8.8', 'x'] | ipaddr }}", "['192.168.0.1', '8.8.8.8', 'fe80::1']"},
		{"{{ ['192.168.0.1', 'fe80::1', '8.8.8.8', 'x'] | ipv4 }}", "['192.168.0.1', '8.8.8.8']"},
		{"{{ ['192.168.0.1', 'fe80::1', '8.8.8.8', 'x'] | ipv6 }}", "['fe80::1']"},
		{"{{ ['192.168.0.1', 'fe80::1', '8.8.8.8', 'x'] | ipaddr('private') }}", "['192.168.0.1', 'fe80::1']"},
		{"{{ ['192.168.0.1', 'fe80::1', '8.8.8.8', 'x'] | ipv6('link-local') }}", "['fe80::1']"},
		{"{{ '2001:db8:0:0:0::1' | ipv6 }}", "2001:db8::1"},
		{"{{ '192.168.0.1/30' | network_hosts }}", "['192.168.0.1', '192.168.0.2']"},
		{"{{ '192.168.0.1/24' | network_size }}", "256"},
		{"{{ ['10.0.0.1/31', '10.1.0.0/30'] | network_size }}", "[2, 4]"},
		{"{{ '192.168.0.1/24' | ip_host }}", "192.168.0.1/24"},
		{"{{ '192.168.0.1' | ip_host }}", "192.168.0.1/32"},
		{"{{ 'fe80::1' | ipwrap }}", "[fe80::1]"},
		{"{{ ['fe80::1', '1.2.3.4', 'x'] | ipwrap }}", "['[fe80::1]', '1.2.3.4', 'x']"},
		{"{{ '00:11:22:33:44:55' | mac_str_to_bytes }}", "b'\\x00\\x11\"3DU'"},
		{"{{ ['10.0.0.1', '192.168.1.2'] | filter_by_networks(['10.0.0.0/8']) }}", "['10.0.0.1']"},
		{"{{ {'eth0': ['10.0.0.1', '192.168.1.2']} | filter_by_networks(['192.168.0.0/16']) }}", "{'eth0': ['192.168.1.2']}"},
		{"{{ 'abc' | yaml_encode }}", "\"abc\""},
		{"{{ [1,2] | tojson }}", "[1, 2]"},
		{"{{ {'a': '<x>'} | tojson }}", "{\"a\": \"\\u003cx\\u003e\"}"},
		{"{{ 'yes' | to_bool }}", "True"},
		{"{{ 'on' | to_bool }}", "False"},
		{"{{ 1.5 | to_bool }}", "False"},
		{"{{ [1] | to_bool }}", "True"},
		{"{{ 'abc' | sequence }}", "['abc']"},
		{"{{ 'abc' is match('a.c') }}", "True"},
		{"{{ 'xabc' is match('a.c') }}", "False"},
		{"{{ [1] is list }}", "True"},
		{"{{ 'a' is list }}", "False"},
		{"{{ 1 is equalto 1 }}", "True"},
		{"{{ [1,2,3] | compress([1,0,1]) | list }}", "[1, 3]"},
		{"{{ {'a': 1, 'b': 'x'} | python }}", "{'a': 1, 'b': 'x'}"},
		{"{{ {'a': 1, 'b': [1, 2]} | dict_to_sls_yaml_params }}", "- a: 1\n- b:\n  - 1\n  - 2"},
		{"{{ {'root': {'child': 'v'}} | xml }}", "<?xml version=\"1.0\" ?>\n<root child=\"v\"/>\n"},
		{"{{ 'x' | load_text }}", "x"},
		{"{{ '8.8.8.8' | ipaddr('public') }}", "8.8.8.8"},
		{"{{ '169.254.0.1' | ipaddr('link-local') }}", "169.254.0.1"},
		{"{{ '224.0.0.1' | ipaddr('multicast') }}", "224.0.0.1"},
		{"{{ '0.0.0.0' | ipaddr('unspecified') }}", "0.0.0.0"},
		{"{{ '240.0.0.1' | ipaddr('reserved') }}", "240.0.0.1"},
		{"{{ 'fec0::1' | ipaddr('site-local') }}", "fec0::1"},
		{"{{ '::ffff:1.2.3.4' | ipaddr }}", "::ffff:102:304"},
		{"{{ '192.168.0.1/24' | ipaddr('private') }}", "192.168.0.1/24"},
		{"{{ [] | union([1]) }}", "[1]"},
		{"{{ ['a', 'a'] | unique }}", "['a']"},
		{"{{ [1, 2.5] | avg }}", "1.75"},
		{"{{ [] | flatten }}", "[]"},
		{"{{ ('a', 'b') | flatten }}", "['a', 'b']"},
		{"{{ [[1, 2], [3]] | flatten }}", "[1, 2, 3]"},
	} {
		got, err := render(t, tc.src, nil)
		if err != nil || strings.TrimSpace(got) != strings.TrimSpace(tc.want) {
			t.Errorf("%s = %q, %v; Salt renders %q", tc.src, got, err, tc.want)
		}
	}
}

// TestSaltFiltersHost covers the filters whose output depends on the
// clock, randomness or the host: their shape, and Salt's output for a
// fixed time in UTC.
func TestSaltFiltersHost(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	defer func() { time.Local = local }()
	for _, tc := range []struct{ src, want string }{
		{`{{ 1700000000 | strftime('%Y-%m-%d %H:%M:%S') }}`, `2023-11-14 22:13:20`},
		{`{{ '1700000000' | strftime('%d %b %Y %j %A %p %I') }}`, `14 Nov 2023 318 Tuesday PM 10`},
		{`{{ 1700000000 | date_format }}`, `2023-11-14`},
		{`{{ 12 | random_hash | length }}`, `32`},
		{`{{ 12 | random_hash('sha256') | length }}`, `64`},
		{`{{ 5 | random_str | length }}`, `5`},
		{`{{ 'AC:DE:48' | gen_mac | length }}`, `17`},
		{`{{ 'sh' | which is string }}`, `True`},
		{`{{ '/nonexistent' | is_empty }}`, `False`},
		{`{{ ifelse('I@nope:x', 1, 'G@os_family:Debian', 2, 3) }}`, `2`},
		{`{{ ifelse(False, 1, 3) }}`, `3`},
		{`{{ dict([('a', 1)], b=2) | json }}`, `{"a": 1, "b": 2}`},
	} {
		got, err := render(t, tc.src, map[string]any{"grains": map[string]any{"os_family": "Debian"}, "opts": map[string]any{"id": "m1"}})
		if err != nil || strings.TrimSpace(got) != tc.want {
			t.Errorf("%s = %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{`{{ raise('custom error') }}`, `custom error`},
		{`{{ 'hello' | random_hash }}`, `can only concatenate str (not "int") to str`},
		{`{{ [1] | flatten(bogus=1) }}`, `flatten() got an unexpected keyword argument 'bogus'`},
		{`{{ ifelse('a', 'b') }}`, `The ifelse function must have an odd number of arguments!`},
		{`{{ '1K' | union }}`, `union() missing 1 required positional argument: 'lst2'`},
	} {
		_, err := render(t, tc.src, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
