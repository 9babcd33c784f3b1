-- SPDX-License-Identifier: BSD-3-Clause
-- Copyright(c) 2026 The rpcr authors
--
-- RPC-over-RDMA version 2 (draft-ietf-nfsv4-rpcrdma-version-two-01) and transport
-- characteristics (draft-dnoveck-nfsv4-rpcrdma-xcharext-00, carried in rpcr's header type
-- 0x72706372) for Wireshark and tshark. Wireshark's own "rpcordma" dissector decodes version 1
-- only; this one registers beside it on the same InfiniBand/RoCE payload heuristic list, takes
-- the messages whose second word is 2, and hands an inline RPC message (RDMA2_MSG without the
-- MORE flag) to Wireshark's RPC dissector.
--
-- Install (doc/rpcrdma-v2.md):
--   mkdir -p ~/.local/lib/wireshark/plugins && cp rpcrdma2.lua ~/.local/lib/wireshark/plugins/
-- or, for one run:  tshark -X lua_script:usertools/wireshark/rpcrdma2.lua -r capture.pcapng
--
-- Display filter: rpcrdma2. The field names follow Wireshark's rpcordma where the meaning is
-- the same (xid, reads_count, position, ...). The decoding rules are rpcr's lib/proto/v2.c and
-- lib/proto/xchar.c; test/tshark/tshark-check.sh --v2 checks this file against them.

local p = Proto("rpcrdma2", "RPC-over-RDMA version 2")

local htypes = {
	[0] = "RDMA2_MSG", [1] = "RDMA2_NOMSG", [4] = "RDMA2_ERROR", [5] = "RDMA2_CONNPROP",
	[0x72706372] = "RPCR_OPTIONAL",
}
local errs = {
	[1] = "RDMA2_ERR_VERS", [2] = "RDMA2_ERR_BAD_XDR", [3] = "RDMA2_ERR_BAD_PROPVAL",
	[4] = "RDMA2_ERR_INVAL_HTYPE", [5] = "RDMA2_ERR_INVAL_CONT", [6] = "RDMA2_ERR_READ_CHUNKS",
	[7] = "RDMA2_ERR_WRITE_CHUNKS", [8] = "RDMA2_ERR_SEGMENTS", [9] = "RDMA2_ERR_WRITE_RESOURCE",
	[10] = "RDMA2_ERR_REPLY_RESOURCE", [100] = "RDMA2_ERR_SYSTEM",
}
local props = {
	[1] = "SBSIZ (max Send size)", [2] = "RBSIZ (receive buffer size)",
	[3] = "RSSIZ (max RDMA segment size)", [4] = "RCSIZ (max RDMA segment count)",
	[5] = "BRS (reverse-direction support)", [6] = "HOSTAUTH",
}
local brs = { [0] = "NONE", [1] = "SIMPLE", [2] = "CONT", [3] = "GENL" }
local opts = { [1] = "INIT_XCHAR", [2] = "REQ_XCHAR", [3] = "RESP_XCHAR", [4] = "UPD_XCHAR" }
local xchars = { [1] = "RBSIZ", [2] = "RQREMINV", [3] = "BRS" }
local subsets = { [1] = { "nochg" }, [3] = { "done", "rej", "pend" } }

local f = {
	xid = ProtoField.uint32("rpcrdma2.xid", "XID", base.HEX),
	vers = ProtoField.uint32("rpcrdma2.vers", "Version", base.DEC),
	credit = ProtoField.uint32("rpcrdma2.credit", "Credit word", base.HEX),
	granted = ProtoField.uint32("rpcrdma2.credit.granted", "Credits granted", base.DEC, nil,
		0x0000ffff),
	max = ProtoField.uint32("rpcrdma2.credit.max", "Credits outstanding at most", base.DEC, nil,
		0xffff0000),
	htype = ProtoField.uint32("rpcrdma2.htype", "Header type", base.DEC, htypes),
	flags = ProtoField.uint32("rpcrdma2.flags", "Flags", base.HEX),
	response = ProtoField.bool("rpcrdma2.flags.response", "RESPONSE", 32, nil, 0x1),
	more = ProtoField.bool("rpcrdma2.flags.more", "MORE", 32, nil, 0x2),
	tpmore = ProtoField.bool("rpcrdma2.flags.tpmore", "TPMORE", 32, nil, 0x4),
	inv_handle = ProtoField.uint32("rpcrdma2.inv_handle", "Handle to invalidate", base.HEX),
	reads_count = ProtoField.uint32("rpcrdma2.reads_count", "Read list", base.DEC),
	writes_count = ProtoField.uint32("rpcrdma2.writes_count", "Write list", base.DEC),
	reply_count = ProtoField.uint32("rpcrdma2.reply_count", "Reply chunk", base.DEC),
	position = ProtoField.uint32("rpcrdma2.position", "Position", base.DEC),
	segment_count = ProtoField.uint32("rpcrdma2.segment_count", "Segments", base.DEC),
	handle = ProtoField.uint32("rpcrdma2.handle", "Handle", base.HEX),
	length = ProtoField.uint32("rpcrdma2.length", "Length", base.DEC),
	offset = ProtoField.uint64("rpcrdma2.offset", "Offset", base.HEX),
	err = ProtoField.uint32("rpcrdma2.err", "Error", base.DEC, errs),
	vers_low = ProtoField.uint32("rpcrdma2.vers_low", "Lowest version", base.DEC),
	vers_high = ProtoField.uint32("rpcrdma2.vers_high", "Highest version", base.DEC),
	max_chunks = ProtoField.uint32("rpcrdma2.max_chunks", "Chunks at most", base.DEC),
	max_segments = ProtoField.uint32("rpcrdma2.max_segments", "Segments at most", base.DEC),
	chunk_index = ProtoField.uint32("rpcrdma2.chunk_index", "Chunk index", base.DEC),
	length_needed = ProtoField.uint32("rpcrdma2.length_needed", "Length needed", base.DEC),
	prop_count = ProtoField.uint32("rpcrdma2.prop_count", "Properties", base.DEC),
	prop_which = ProtoField.uint32("rpcrdma2.prop.which", "Property", base.DEC, props),
	prop_len = ProtoField.uint32("rpcrdma2.prop.len", "Data length", base.DEC),
	prop_value = ProtoField.uint32("rpcrdma2.prop.value", "Value", base.DEC),
	prop_brs = ProtoField.uint32("rpcrdma2.prop.brs", "Reverse direction", base.DEC, brs),
	prop_data = ProtoField.bytes("rpcrdma2.prop.data", "Data"),
	opttype = ProtoField.uint32("rpcrdma2.opttype", "Operation", base.DEC, opts),
	optinfo_len = ProtoField.uint32("rpcrdma2.optinfo_len", "Operation length", base.DEC),
	xchar_count = ProtoField.uint32("rpcrdma2.xchar.count", "Characteristics", base.DEC),
	xchar_which = ProtoField.uint32("rpcrdma2.xchar.which", "Characteristic", base.DEC, xchars),
	xchar_len = ProtoField.uint32("rpcrdma2.xchar.len", "Data length", base.DEC),
	xchar_value = ProtoField.uint32("rpcrdma2.xchar.value", "Value", base.DEC),
	xchar_data = ProtoField.bytes("rpcrdma2.xchar.data", "Data"),
	subset_count = ProtoField.uint32("rpcrdma2.xchar.subset_count", "Subset words", base.DEC),
	subset_word = ProtoField.uint32("rpcrdma2.xchar.subset", "Subset word", base.HEX),
	pendclr = ProtoField.uint32("rpcrdma2.xchar.pendclr", "Pending cleared", base.DEC),
	payload = ProtoField.bytes("rpcrdma2.payload", "Payload"),
}
p.fields = f

local e_bad = ProtoExpert.new("rpcrdma2.malformed", "Malformed RPC-over-RDMA version 2 header",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_body = ProtoExpert.new("rpcrdma2.optinfo", "Operation body not decoded",
	expert.group.UNDECODED, expert.severity.WARN)
p.experts = { e_bad, e_body }

local rpc = Dissector.get("rpc")

-- A cursor over the header: w() takes one XDR word, or raises "short" past the end.
local function cursor(tvb, start)
	local c = { off = start, len = tvb:len() }
	function c.need(n)
		if c.off + n > c.len then error("short", 0) end
	end
	function c.w(tree, field)
		c.need(4)
		local r = tvb(c.off, 4)
		c.off = c.off + 4
		if tree and field then tree:add(field, r) end
		return r:uint()
	end
	function c.opaque(tree, lenfield, datafield)
		local n = c.w(tree, lenfield)
		local padded = n + (4 - n % 4) % 4
		c.need(padded)
		local r = n > 0 and tvb(c.off, n) or nil
		c.off = c.off + padded
		return n, r
	end
	return c
end

-- handle length offset
local function seg(c, tvb, tree)
	c.need(16)
	local t = tree:add(tvb(c.off, 16), "Segment")
	c.w(t, f.handle)
	c.w(t, f.length)
	t:add(f.offset, tvb(c.off, 8))
	c.off = c.off + 8
end

local function chunk_lists(c, tvb, tree)
	local reads, writes, reply = 0, 0, 0
	local rt = tree:add(tvb(c.off), "Read list")
	while c.w() ~= 0 do
		reads = reads + 1
		local t = rt:add(tvb(c.off, 20), "Read segment")
		c.w(t, f.position)
		seg(c, tvb, t)
	end
	rt:add(f.reads_count, reads):set_generated()
	local wt = tree:add(tvb(c.off), "Write list")
	while c.w() ~= 0 do
		writes = writes + 1
		local t = wt:add(tvb(c.off), "Write chunk")
		local n = c.w(t, f.segment_count)
		for _ = 1, n do seg(c, tvb, t) end
	end
	wt:add(f.writes_count, writes):set_generated()
	local pt = tree:add(tvb(c.off), "Reply chunk")
	if c.w() ~= 0 then
		reply = 1
		local n = c.w(pt, f.segment_count)
		for _ = 1, n do seg(c, tvb, pt) end
	end
	pt:add(f.reply_count, reply):set_generated()
end

local function error_arm(c, tree, err)
	if err == 1 then
		c.w(tree, f.vers_low); c.w(tree, f.vers_high)
	elseif err == 6 or err == 7 then
		c.w(tree, f.max_chunks)
	elseif err == 8 then
		c.w(tree, f.max_segments)
	elseif err == 9 then
		c.w(tree, f.chunk_index); c.w(tree, f.length_needed)
	elseif err == 10 then
		c.w(tree, f.length_needed)
	end
end

local function connprop(c, tvb, tree)
	local n = c.w(tree, f.prop_count)
	for _ = 1, n do
		local t = tree:add(tvb(c.off), "Property")
		local which = c.w(t, f.prop_which)
		local len, r = c.opaque(t, f.prop_len)
		if r and len == 4 and which >= 1 and which <= 4 then
			t:add(f.prop_value, r)
		elseif r and len == 4 and which == 5 then
			t:add(f.prop_brs, r)
		elseif r then
			t:add(f.prop_data, r)
		end
		t:append_text(": " .. (props[which] or tostring(which)))
	end
end

-- The body of an xcharext operation, from lib/proto/rpcr_proto_xchar.h's grammar. With a nil
-- tree nothing is added: a dry run that tells whether the body is one (it raises otherwise).
local function sub(tree, r, text)
	return tree and tree:add(r, text) or nil
end

local function xcharval(c, tvb, tree)
	local t = sub(tree, tvb(c.off), "Characteristic")
	local which = c.w(t, f.xchar_which)
	local len, r = c.opaque(t, f.xchar_len)
	if t then
		if r and len == 4 and xchars[which] then
			t:add(f.xchar_value, r)
		elseif r then
			t:add(f.xchar_data, r)
		end
		t:append_text(": " .. (xchars[which] or tostring(which)))
	end
end

local function xcharsubset(c, tvb, tree, name)
	local t = sub(tree, tvb(c.off), "Subset " .. name)
	local n = c.w(t, f.subset_count)
	c.need(4 * n)
	for _ = 1, n do c.w(t, f.subset_word) end
end

local function xchar(c, tvb, tree, op, stop)
	if op == 1 or op == 2 then
		local n = c.w(tree, f.xchar_count)
		c.need(8 * n)
		for _ = 1, n do xcharval(c, tvb, tree) end
		if op == 1 then xcharsubset(c, tvb, tree, "nochg") end
	elseif op == 3 then
		for _, name in ipairs(subsets[3]) do xcharsubset(c, tvb, tree, name) end
	elseif op == 4 then
		xcharval(c, tvb, tree)
		local pendclr = c.w(tree, f.pendclr)
		if pendclr > 1 then error("short", 0) end
	end
	if c.off ~= stop then error("short", 0) end
end

local function dissect(tvb, pinfo, tree)
	local c = cursor(tvb, 0)
	local t = tree:add(p, tvb())
	local ok, msg = pcall(function()
		local xid = c.w(t, f.xid)
		c.w(t, f.vers)
		c.need(4)
		local ct = t:add(f.credit, tvb(c.off, 4))
		ct:add(f.granted, tvb(c.off, 4))
		ct:add(f.max, tvb(c.off, 4))
		c.off = c.off + 4
		local htype = c.w(t, f.htype)
		c.need(4)
		local flags = tvb(c.off, 4):uint()
		local ft = t:add(f.flags, tvb(c.off, 4))
		ft:add(f.response, tvb(c.off, 4))
		ft:add(f.more, tvb(c.off, 4))
		ft:add(f.tpmore, tvb(c.off, 4))
		c.off = c.off + 4
		local name = htypes[htype] or ("htype " .. htype)
		pinfo.cols.protocol = "RPC-over-RDMA v2"
		pinfo.cols.info = string.format("%s xid 0x%08x%s%s", name, xid,
			bit32.band(flags, 1) ~= 0 and " RESPONSE" or "",
			bit32.band(flags, 2) ~= 0 and " MORE" or "")
		t:append_text(", " .. name)
		if htype == 0 or htype == 1 then
			c.w(t, f.inv_handle)
			chunk_lists(c, tvb, t)
			if htype == 0 and c.off < tvb:len() then
				local payload = tvb(c.off)
				if bit32.band(flags, 2) == 0 and rpc then
					rpc:call(payload:tvb(), pinfo, tree)
				else
					t:add(f.payload, payload)
				end
			end
		elseif htype == 4 then
			local err = c.w(t, f.err)
			error_arm(c, t, err)
			pinfo.cols.info:append(" " .. (errs[err] or ("err " .. err)))
		elseif htype == 5 then
			connprop(c, tvb, t)
		elseif htype == 0x72706372 then
			local op = c.w(t, f.opttype)
			local len = c.w(t, f.optinfo_len)
			local stop = c.off + len
			c.need(len + (4 - len % 4) % 4)
			-- A body that is one of the operations rpcr knows is decoded; any other is
			-- shown as it is (version 2 carries it as opaque data).
			local body = c.off
			if opts[op] and pcall(xchar, cursor(tvb, body), tvb, nil, op, stop) then
				c.off = body
				xchar(c, tvb, t, op, stop)
				pinfo.cols.info:append(" " .. opts[op])
			elseif len > 0 then
				t:add(f.payload, tvb(body, len))
				if opts[op] then
					t:add_proto_expert_info(e_body, "not a valid " .. opts[op] .. " body")
				end
			end
			c.off = stop + (4 - len % 4) % 4
		end
	end)
	if not ok then
		t:add_proto_expert_info(e_bad, msg == "short" and "header runs past the message" or msg)
	end
	return tvb:len()
end

function p.dissector(tvb, pinfo, tree)
	return dissect(tvb, pinfo, tree)
end

-- Version 2 messages: the version word is 2 and the header type one the draft or rpcr defines.
local function heuristic(tvb, pinfo, tree)
	if tvb:len() < 20 or tvb(4, 4):uint() ~= 2 then return false end
	if not htypes[tvb(12, 4):uint()] then return false end
	dissect(tvb, pinfo, tree)
	return true
end

p:register_heuristic("infiniband.payload", heuristic)
