package jinja

import (
	"crypto/rand"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
)

// random_sample and random_shuffle with a seed are Python's
// random.Random(salt.utils.data.hash(seed)).sample: formulas use them to
// spread cron jobs by minion id, so the same seed must give Salt's own
// order. This is Python's Mersenne Twister, its seeding from a string
// and its sample.

type mt19937 struct {
	mt  [624]uint32
	mti int
}

func (m *mt19937) initGenrand(s uint32) {
	m.mt[0] = s
	for i := 1; i < 624; i++ {
		m.mt[i] = 1812433253*(m.mt[i-1]^(m.mt[i-1]>>30)) + uint32(i)
	}
	m.mti = 624
}

func (m *mt19937) initByArray(key []uint32) {
	m.initGenrand(19650218)
	i, j := 1, 0
	k := max(624, len(key))
	for ; k > 0; k-- {
		m.mt[i] = (m.mt[i] ^ ((m.mt[i-1] ^ (m.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			m.mt[0] = m.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = 623; k > 0; k-- {
		m.mt[i] = (m.mt[i] ^ ((m.mt[i-1] ^ (m.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			m.mt[0] = m.mt[623]
			i = 1
		}
	}
	m.mt[0] = 0x80000000
}

func (m *mt19937) uint32() uint32 {
	const upper, lower, matrixA = 0x80000000, 0x7fffffff, 0x9908b0df
	if m.mti >= 624 {
		for kk := 0; kk < 624; kk++ {
			y := m.mt[kk]&upper | m.mt[(kk+1)%624]&lower
			v := m.mt[(kk+397)%624] ^ (y >> 1)
			if y&1 != 0 {
				v ^= matrixA
			}
			m.mt[kk] = v
		}
		m.mti = 0
	}
	y := m.mt[m.mti]
	m.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// seedString is random.seed(s) of a str (version 2).
func seedString(s string) *mt19937 {
	a := []byte(s)
	sum := sha512.Sum512(a)
	a = append(a, sum[:]...)
	n := new(big.Int).SetBytes(a)
	var key []uint32
	mask := big.NewInt(0xffffffff)
	for n.Sign() > 0 {
		key = append(key, uint32(new(big.Int).And(n, mask).Uint64()))
		n.Rsh(n, 32)
	}
	if len(key) == 0 {
		key = []uint32{0}
	}
	m := &mt19937{}
	m.initByArray(key)
	return m
}

// getrandbits is Python's getrandbits(k) for k ≤ 32.
func (m *mt19937) getrandbits(k int) uint32 {
	if k == 0 {
		return 0
	}
	return m.uint32() >> (32 - k)
}

func (m *mt19937) randbelow(n int) int {
	k := 0
	for x := n; x > 0; x >>= 1 {
		k++
	}
	r := int(m.getrandbits(k))
	for r >= n {
		r = int(m.getrandbits(k))
	}
	return r
}

// cryptoBelow is a random integer in [0, n) for unseeded samples.
func cryptoBelow(n int) int {
	r, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		return 0
	}
	return int(r.Int64())
}

// pySample is random.sample(population, k) with below as _randbelow.
func pySample(pop []any, k int, below func(int) int) ([]any, error) {
	n := len(pop)
	if k < 0 || k > n {
		return nil, pyErr("Sample larger than population or is negative")
	}
	result := make([]any, k)
	setsize := 21
	if k > 5 {
		setsize += int(math.Pow(4, math.Ceil(math.Log(float64(k*3))/math.Log(4))))
	}
	if n <= setsize {
		pool := append([]any(nil), pop...)
		for i := 0; i < k; i++ {
			j := below(n - i)
			result[i] = pool[j]
			pool[j] = pool[n-i-1]
		}
		return result, nil
	}
	selected := map[int]bool{}
	for i := 0; i < k; i++ {
		j := below(n)
		for selected[j] {
			j = below(n)
		}
		selected[j] = true
		result[i] = pop[j]
	}
	return result, nil
}

// sampler is the _randbelow of a sample: seeded as Salt seeds it (the
// sha512 hex digest of the seed, a string), or random.
func sampler(seed any) (func(int) int, error) {
	if seed == nil {
		return cryptoBelow, nil
	}
	var b []byte
	switch t := seed.(type) {
	case string:
		b = []byte(t)
	case pyByteString:
		b = []byte(t)
	default:
		return nil, fmt.Errorf("object supporting the buffer API required")
	}
	sum := sha512.Sum512(b)
	return seedString(hex.EncodeToString(sum[:])).randbelow, nil
}

// randomSample is Salt's random_sample(value, size, seed=None).
func randomSample(in any, args []any) (any, error) {
	l, err := asList(in)
	if err != nil {
		return nil, err
	}
	size, ok := asInt(args[0])
	if !ok {
		return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", pyTypeName(args[0]))
	}
	below, err := sampler(args[1])
	if err != nil {
		return nil, err
	}
	return pySample(l, size, below)
}

// randomShuffle is Salt's random_shuffle(value, seed=None).
func randomShuffle(in any, args []any) (any, error) {
	l, err := asList(in)
	if err != nil {
		return nil, err
	}
	below, err := sampler(args[0])
	if err != nil {
		return nil, err
	}
	return pySample(l, len(l), below)
}
