package pins

// Keyword comparisons that stand alone: type, enum and const, required, numeric bounds.

func (d *delta) types(ov any, oin bool, nv any, nin bool) {
	set := func(v any, in bool) (map[string]bool, bool) {
		if !in {
			return nil, true // any type
		}
		switch v := v.(type) {
		case string:
			return map[string]bool{v: true}, true
		case []any:
			m := map[string]bool{}
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					return nil, false
				}
				m[s] = true
			}
			return m, true
		}
		return nil, false
	}
	o, ok1 := set(ov, oin)
	n, ok2 := set(nv, nin)
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	covers := func(s map[string]bool, t string) bool {
		return s == nil || s[t] || (t == "integer" && s["number"])
	}
	if o != nil && n == nil {
		d.widened = true
	}
	if o == nil && n != nil {
		d.narrowed = true
	}
	for t := range n {
		if !covers(o, t) {
			d.widened = true
		}
	}
	for t := range o {
		if !covers(n, t) {
			d.narrowed = true
		}
	}
}

func (d *delta) enum(ov any, oin bool, nv any, nin bool) {
	set := func(v any) (map[string]bool, bool) {
		arr, ok := v.([]any)
		if !ok {
			return nil, false
		}
		m := map[string]bool{}
		for _, e := range arr {
			c, err := Encode(e)
			if err != nil {
				return nil, false
			}
			m[string(c)] = true
		}
		return m, true
	}
	if d.addedOrRemoved(oin, nin) {
		return
	}
	o, ok1 := set(ov)
	n, ok2 := set(nv)
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	for v := range n {
		if !o[v] {
			d.widened = true
		}
	}
	for v := range o {
		if !n[v] {
			d.narrowed = true
		}
	}
}

func (d *delta) required(ov, nv any) {
	set := func(v any) (map[string]bool, bool) {
		if v == nil {
			return map[string]bool{}, true
		}
		arr, ok := v.([]any)
		if !ok {
			return nil, false
		}
		m := map[string]bool{}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			m[s] = true
		}
		return m, true
	}
	o, ok1 := set(ov)
	n, ok2 := set(nv)
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	for r := range o {
		if !n[r] {
			d.widened = true
		}
	}
	for r := range n {
		if !o[r] {
			d.narrowed = true
		}
	}
}

func (d *delta) bound(ov any, oin bool, nv any, nin bool, lower bool) {
	if d.addedOrRemoved(oin, nin) {
		return
	}
	// Bounds compare by exact value (numbers.go), as a client that reads decimals compares them:
	// a maximum moved from 9007199254740992 to 9007199254740993 is looser, though both round
	// to one double.
	o, ok1 := numberDecimal(ov)
	n, ok2 := numberDecimal(nv)
	if !ok1 || !ok2 {
		d.widened = true
		return
	}
	c := n.cmp(o)
	if !lower {
		c = -c
	}
	if c < 0 {
		d.widened = true
	} else if c != 0 {
		d.narrowed = true
	}
}
