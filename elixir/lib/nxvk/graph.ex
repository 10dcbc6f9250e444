if Code.ensure_loaded?(Nx) do
  defmodule Nxvk.Graph do
    @moduledoc false
    # A port `run` graph under construction (man nxvk-port(7), "run"): inputs
    # (live handles or bytes carried in the frame), ops, and the outputs to
    # keep.  Nxvk.Backend builds one per native callback (a cast and the op
    # in one round trip); Nxvk.Compiler one per defn.

    alias Nx.Tensor, as: T

    # int64: whether the device stores i64/u64 (shaderInt64); without it
    # s64/u64 are held as words (see Nxvk.Backend)
    defstruct inputs: [], bytes: [], ops: [], n: 0, keep: [], server: nil, device: 0, int64: true

    # one to one (man nxvk-port(7), DTYPES)
    @native %{
      {:f, 16} => "f16",
      {:bf, 16} => "bf16",
      {:f, 32} => "f32",
      {:f, 64} => "f64",
      {:s, 8} => "i8",
      {:s, 16} => "i16",
      {:s, 32} => "i32",
      {:s, 64} => "i64",
      {:u, 8} => "u8",
      {:u, 16} => "u16",
      {:u, 32} => "u32",
      {:u, 64} => "u64"
    }

    def native_types, do: Map.keys(@native)
    def dtype(type), do: Map.fetch!(@native, type)

    @doc "An engine dtype (s64/u64 included: see native?/2 for a device)."
    def native?(type), do: Map.has_key?(@native, type)

    @doc "An engine dtype that a device with (`int64` true) or without shaderInt64 stores."
    def native?({k, 64}, false) when k in [:s, :u], do: false
    def native?(type, _int64), do: native?(type)

    for {type, name} <- @native, do: def(type_of(unquote(name)), do: unquote(type))
    # Nx has no bool: its comparisons give {:u, 8} 0 or 1, the same bytes
    def type_of("bool"), do: {:u, 8}
    def type_of(other), do: raise(ArgumentError, "nxvk: unknown dtype #{inspect(other)}")

    def new(server, device, int64 \\ true),
      do: %__MODULE__{server: server, device: device, int64: int64}

    defp name(g), do: {%{g | n: g.n + 1}, "v#{g.n}"}

    @doc "A tensor as an input, converted to `type` (a native type)."
    def input(g, %T{} = t, type) do
      {g, v, have} = raw_input(g, t, type)
      cast(g, v, have, type)
    end

    # device tensors by handle (same server); anything else by bytes, converted
    # on the host first when its type is not native
    defp raw_input(g, %T{data: %Nxvk.Backend{handle: h, server: s, words: nil}, type: ty}, _want)
         when is_integer(h) and s == g.server do
      {g, v} = name(g)
      {%{g | inputs: [{v, %{"handle" => h}} | g.inputs]}, v, ty}
    end

    defp raw_input(g, %T{type: ty} = t, want) do
      t = if native?(ty, g.int64), do: t, else: t |> Nxvk.Backend.to_host() |> Nx.as_type(want)
      bin = Nxvk.Backend.host_binary(t)
      {g, v} = name(g)
      json = %{"dtype" => dtype(t.type), "shape" => Tuple.to_list(t.shape), "bytes" => true}
      {%{g | inputs: [{v, json} | g.inputs], bytes: [bin | g.bytes]}, v, t.type}
    end

    @doc "A parameter of a graph to prepare (nxvk-port(7), prepare): named by handle at each exec."
    def param(g) do
      {g, v} = name(g)
      {%{g | inputs: [{v, true} | g.inputs]}, v}
    end

    @doc """
    A tensor of a type the engine lacks, as its raw 32-bit words (an i32
    tensor of shape ++ [w]): for ops that only move elements.
    """
    def word_input(g, %T{data: %Nxvk.Backend{handle: h, server: s, words: w}}, w)
        when is_integer(h) and s == g.server do
      {g, v} = name(g)
      {%{g | inputs: [{v, %{"handle" => h}} | g.inputs]}, v}
    end

    def word_input(g, %T{} = t, w) do
      bin = Nxvk.Backend.host_binary(t)
      {g, v} = name(g)
      json = %{"dtype" => "i32", "shape" => Tuple.to_list(t.shape) ++ [w], "bytes" => true}
      {%{g | inputs: [{v, json} | g.inputs], bytes: [bin | g.bytes]}, v}
    end

    # ------------------------------------------- 64-bit integers as words

    @doc """
    The low and high 32-bit words of an integer tensor as two i32 values of
    shape ++ [1]: s64/u64 held as words (see Nxvk.Backend), or s32/u8
    (sign- or zero-extended).
    """
    def int64_words(g, %T{type: {k, 64}} = t) when k in [:s, :u] do
      {g, v} = word_input(g, t, 2)
      dims = Tuple.to_list(t.shape)
      zeros = List.duplicate(0, length(dims))
      {g, lo} = op(g, "slice", [v], %{"start" => zeros ++ [0], "length" => dims ++ [1]})
      {g, hi} = op(g, "slice", [v], %{"start" => zeros ++ [1], "length" => dims ++ [1]})
      {g, lo, hi}
    end

    def int64_words(g, %T{type: type} = t) when type in [{:s, 32}, {:u, 8}] do
      {g, x} = input(g, t, {:s, 32})
      {g, lo} = op(g, "reshape", [x], %{"shape" => Tuple.to_list(t.shape) ++ [1]})
      {g, zero} = scalar(g, 0, {:s, 32})
      {g, minus1} = scalar(g, -1, {:s, 32})
      {g, neg} = op(g, "less", [lo, zero])
      {g, hi} = op(g, "select", [neg, minus1, zero])
      {g, lo, hi}
    end

    # x <u y on i32 words: flip the sign bits (adding INT_MIN wraps) and compare signed
    defp ult(g, x, y) do
      {g, m} = scalar(g, -2_147_483_648, {:s, 32})
      {g, xf} = op(g, "add", [x, m])
      {g, yf} = op(g, "add", [y, m])
      op(g, "less", [xf, yf])
    end

    @doc "a + b or a - b modulo 2^64 on words; the result's words concatenated (shape ++ [2])."
    def int64_addsub(g, op_name, {alo, ahi}, {blo, bhi}) do
      {g, lo} = op(g, op_name, [alo, blo])
      # carry out of the low words: lo <u alo (add); borrow: alo <u blo (subtract)
      {g, c} = if op_name == "add", do: ult(g, lo, alo), else: ult(g, alo, blo)
      {g, c} = op(g, "as_type", [c], %{"dtype" => "i32"})
      {g, hi} = op(g, op_name, [ahi, bhi])
      {g, hi} = op(g, op_name, [hi, c])
      {g, lo} = broadcast_like(g, lo, hi)
      {g, hi} = broadcast_like(g, hi, lo)
      {g, r} = op(g, "concatenate", [lo, hi], %{"axis" => -1})
      {g, r}
    end

    # lo and hi have the same broadcast shape already (both from a and b)
    defp broadcast_like(g, v, _other), do: {g, v}

    @doc """
    The sum modulo 2^64 of 64-bit integer words (lo, hi of `shape` ++ [1])
    over `attrs` (a reduction's axes and keep_axes), as words of `out_shape`
    ++ [2].  Each value is cut into four 16-bit limbs held in f64; the sums
    of limbs are exact in f64 below 2^37 elements, in any order; the carries
    are then propagated limb by limb.  Needs f64 on the device.
    """
    def int64_sum(g, lo, hi, shape, attrs, out_shape) do
      dims = Tuple.to_list(shape)
      {g, zero} = scalar(g, 0.0, {:f, 64})
      {g, two16} = scalar(g, 65_536.0, {:f, 64})
      {g, two32} = scalar(g, 4_294_967_296.0, {:f, 64})
      {g, lo} = op(g, "reshape", [lo], %{"shape" => dims})
      {g, hi} = op(g, "reshape", [hi], %{"shape" => dims})
      {g, lo} = op(g, "as_type", [lo], %{"dtype" => "f64"})
      {g, hi} = op(g, "as_type", [hi], %{"dtype" => "f64"})
      # the low word unsigned
      {g, neg} = op(g, "less", [lo, zero])
      {g, fix} = op(g, "select", [neg, two32, zero])
      {g, ulo} = op(g, "add", [lo, fix])
      {g, l1} = floor_div(g, ulo, two16)
      {g, l0} = floor_mod(g, ulo, l1, two16)
      {g, l3} = floor_div(g, hi, two16)
      {g, l2} = floor_mod(g, hi, l3, two16)

      {g, sums} =
        Enum.reduce([l0, l1, l2, l3], {g, []}, fn l, {g, acc} ->
          {g, s} = op(g, "sum", [l], attrs)
          {g, [s | acc]}
        end)

      [s0, s1, s2, s3] = Enum.reverse(sums)
      # carries, limb by limb
      {g, c1} = floor_div(g, s0, two16)
      {g, w0} = floor_mod(g, s0, c1, two16)
      {g, t1} = op(g, "add", [s1, c1])
      {g, c2} = floor_div(g, t1, two16)
      {g, w1} = floor_mod(g, t1, c2, two16)
      {g, t2} = op(g, "add", [s2, c2])
      {g, c3} = floor_div(g, t2, two16)
      {g, w2} = floor_mod(g, t2, c3, two16)
      {g, t3} = op(g, "add", [s3, c3])
      {g, c4} = floor_div(g, t3, two16)
      {g, w3} = floor_mod(g, t3, c4, two16)
      {g, lo} = word_of(g, w0, w1, two16, two32)
      {g, hi} = word_of(g, w2, w3, two16, two32)
      {g, lo} = op(g, "reshape", [lo], %{"shape" => Tuple.to_list(out_shape) ++ [1]})
      {g, hi} = op(g, "reshape", [hi], %{"shape" => Tuple.to_list(out_shape) ++ [1]})
      op(g, "concatenate", [lo, hi], %{"axis" => -1})
    end

    @doc """
    a * b modulo 2^64 on 64-bit integer words (lo, hi of shape ++ [1] each,
    broadcasting), as words (shape ++ [2]): 16-bit limbs in f64, the
    products of limbs below 2^64 summed per position (each sum < 2^35,
    exact), then carried.  Two's complement makes it right for s64 too.
    """
    def int64_multiply(g, {alo, ahi}, {blo, bhi}) do
      {g, two16} = scalar(g, 65_536.0, {:f, 64})
      {g, two32} = scalar(g, 4_294_967_296.0, {:f, 64})
      {g, [a0, a1, a2, a3]} = limbs(g, alo, ahi, two16, two32)
      {g, [b0, b1, b2, b3]} = limbs(g, blo, bhi, two16, two32)

      terms = [
        [{a0, b0}],
        [{a0, b1}, {a1, b0}],
        [{a0, b2}, {a1, b1}, {a2, b0}],
        [{a0, b3}, {a1, b2}, {a2, b1}, {a3, b0}]
      ]

      {g, ps} =
        Enum.reduce(terms, {g, []}, fn pairs, {g, acc} ->
          {g, [first | rest]} =
            Enum.reduce(pairs, {g, []}, fn {x, y}, {g, l} ->
              {g, m} = op(g, "multiply", [x, y])
              {g, [m | l]}
            end)

          {g, sum} = Enum.reduce(rest, {g, first}, fn m, {g, s} -> op(g, "add", [s, m]) end)
          {g, [sum | acc]}
        end)

      [p0, p1, p2, p3] = Enum.reverse(ps)
      {g, c1} = floor_div(g, p0, two16)
      {g, w0} = floor_mod(g, p0, c1, two16)
      {g, t1} = op(g, "add", [p1, c1])
      {g, c2} = floor_div(g, t1, two16)
      {g, w1} = floor_mod(g, t1, c2, two16)
      {g, t2} = op(g, "add", [p2, c2])
      {g, c3} = floor_div(g, t2, two16)
      {g, w2} = floor_mod(g, t2, c3, two16)
      {g, t3} = op(g, "add", [p3, c3])
      {g, c4} = floor_div(g, t3, two16)
      {g, w3} = floor_mod(g, t3, c4, two16)
      {g, lo} = word_of(g, w0, w1, two16, two32)
      {g, hi} = word_of(g, w2, w3, two16, two32)
      op(g, "concatenate", [lo, hi], %{"axis" => -1})
    end

    # the four unsigned 16-bit limbs (f64) of words lo, hi
    defp limbs(g, lo, hi, two16, two32) do
      {g, zero} = scalar(g, 0.0, {:f, 64})

      {g, [ulo, uhi]} =
        Enum.reduce([lo, hi], {g, []}, fn w, {g, acc} ->
          {g, f} = op(g, "as_type", [w], %{"dtype" => "f64"})
          {g, neg} = op(g, "less", [f, zero])
          {g, fix} = op(g, "select", [neg, two32, zero])
          {g, u} = op(g, "add", [f, fix])
          {g, acc ++ [u]}
        end)

      {g, l1} = floor_div(g, ulo, two16)
      {g, l0} = floor_mod(g, ulo, l1, two16)
      {g, l3} = floor_div(g, uhi, two16)
      {g, l2} = floor_mod(g, uhi, l3, two16)
      {g, [l0, l1, l2, l3]}
    end

    defp floor_div(g, x, d) do
      {g, q} = op(g, "divide", [x, d])
      op(g, "floor", [q])
    end

    defp floor_mod(g, x, q, d) do
      {g, m} = op(g, "multiply", [q, d])
      op(g, "subtract", [x, m])
    end

    # two 16-bit limbs (f64, each in [0, 2^16)) as one i32 word's bits
    defp word_of(g, a, b, two16, two32) do
      {g, hb} = op(g, "multiply", [b, two16])
      {g, u} = op(g, "add", [a, hb])
      {g, half} = scalar(g, 2_147_483_648.0, {:f, 64})
      {g, zero} = scalar(g, 0.0, {:f, 64})
      {g, big} = op(g, "greater_equal", [u, half])
      {g, fix} = op(g, "select", [big, two32, zero])
      {g, s} = op(g, "subtract", [u, fix])
      op(g, "as_type", [s], %{"dtype" => "i32"})
    end

    @doc "A comparison of 64-bit integers (signed unless `unsigned`) as u8 of shape ++ [1]."
    def int64_compare(g, cmp, unsigned, {alo, ahi}, {blo, bhi}) do
      {g, eq_hi} = op(g, "equal", [ahi, bhi])
      {g, eq_lo} = op(g, "equal", [alo, blo])

      case cmp do
        "equal" ->
          op(g, "min", [eq_hi, eq_lo])

        "not_equal" ->
          {g, e} = op(g, "min", [eq_hi, eq_lo])
          {g, one} = scalar(g, 1, {:u, 8})
          op(g, "subtract", [one, e])

        _ ->
          # a < b: hi_a < hi_b, or equal highs and lo_a <u lo_b
          {x, y, strict} =
            case cmp do
              "less" -> {{alo, ahi}, {blo, bhi}, true}
              "greater" -> {{blo, bhi}, {alo, ahi}, true}
              "less_equal" -> {{blo, bhi}, {alo, ahi}, false}
              "greater_equal" -> {{alo, ahi}, {blo, bhi}, false}
            end

          {xlo, xhi} = x
          {ylo, yhi} = y
          {g, lt_hi} = if unsigned, do: ult(g, xhi, yhi), else: op(g, "less", [xhi, yhi])
          {g, lt_lo} = ult(g, xlo, ylo)
          {g, both} = op(g, "min", [eq_hi, lt_lo])
          {g, lt} = op(g, "max", [lt_hi, both])

          if strict do
            {g, lt}
          else
            # a <= b is not (b < a)
            {g, one} = scalar(g, 1, {:u, 8})
            op(g, "subtract", [one, lt])
          end
      end
    end

    @doc "A scalar constant of a native type, as bytes in the frame."
    def scalar(g, number, type) do
      t = Nx.tensor(number, type: type, backend: Nx.BinaryBackend)
      {g, v, _} = raw_input(g, t, type)
      {g, v}
    end

    def cast(g, v, same, same), do: {g, v}

    def cast(g, v, from, to) do
      convert(g, v, from, to, g.int64, &op/4, &scalar/3)
    end

    @doc """
    The conversion of value `v` from type `from` to `to` (both native) as
    Nx.BinaryBackend does it, where the engine's as_type alone differs, with
    `op.(acc, name, ins, attrs)` and `const.(acc, number, type)` (each
    giving `{acc, value}`) to build it (Nxvk.Compiler builds its own nodes):

      * a 64-bit integer to a float narrower than f64 goes through f64, as
        Erlang converts an integer (rounded to double first);
      * a float to an integer narrower than s64 or to u64: Nx truncates and
        wraps (-1.0 to u8 is 255), the engine saturates; with i64 on the
        device, finite values below 2^63 in magnitude go through i64 and
        wrap, the rest (NaN to 0, infinities to the extremes, as Nx) stay
        with the engine's conversion.
    """
    def convert(acc, v, from, to, int64, op, const) do
      as = fn acc, v, t -> op.(acc, "as_type", [v], %{"dtype" => dtype(t)}) end

      case {from, to} do
        {{k, 64}, {f, bits}} when k in [:s, :u] and f in [:f, :bf] and bits < 64 ->
          {acc, w} = as.(acc, v, {:f, 64})
          as.(acc, w, to)

        {{f, _}, {k, _}} when f in [:f, :bf] and k in [:s, :u] and to != {:s, 64} and int64 ->
          {acc, direct} = as.(acc, v, to)
          {acc, i} = as.(acc, v, {:s, 64})
          {acc, wrapped} = as.(acc, i, to)
          {acc, a} = op.(acc, "abs", [v], %{})
          {acc, lim} = const.(acc, 9.223372036854775807e18, from)
          {acc, small} = op.(acc, "less", [a, lim], %{})
          op.(acc, "select", [small, wrapped, direct], %{})

        _ ->
          as.(acc, v, to)
      end
    end

    @comparisons ~w(equal not_equal less less_equal greater greater_equal)

    # the engine's comparisons give bool and its ops take no mixed dtypes:
    # each comparison is followed by an as_type to u8 (Nx's comparison
    # type) in the same graph, so no bool value reaches another op or a
    # kept output
    def op(g, name, ins, attrs \\ %{})

    def op(g, name, ins, attrs) when name in @comparisons do
      {g, v} = node(g, name, ins, attrs)
      node(g, "as_type", [v], %{"dtype" => "u8"})
    end

    def op(g, name, ins, attrs), do: node(g, name, ins, attrs)

    defp node(g, name, ins, attrs) do
      {g, v} = name(g)
      node = %{"op" => name, "in" => ins, "out" => v}
      node = if attrs == %{}, do: node, else: Map.put(node, "attrs", attrs)
      {%{g | ops: [node | g.ops]}, v}
    end

    @doc """
    argmax/argmin as Nx.BinaryBackend defines them for floats: a scan that
    keeps the first element and takes a later one only when it compares
    greater (argmax) or less (argmin), so a NaN is never taken, except a NaN
    in the first place, which stays.  The engine's kernel treats NaN
    otherwise: here NaN becomes -inf (argmax) or +inf (argmin) and a NaN
    first element gives index 0.  `shape` is the result's shape, `axis`
    the reduced axis (nil: all, over the flattened tensor).
    """
    def arg_reduce(g, op, x, {k, _} = type, attrs, in_shape, axis, shape) when k in [:f, :bf] do
      fill = if op == "argmax", do: :neg_infinity, else: :infinity
      {g, nan} = op(g, "not_equal", [x, x])
      {g, f} = scalar(g, fill, type)
      {g, y} = op(g, "select", [nan, f, x])
      {g, r} = op(g, op, [y], attrs)
      dims = Tuple.to_list(in_shape)

      {g, first} =
        case axis do
          nil ->
            {g, flat} = op(g, "reshape", [nan], %{"shape" => [Enum.product(dims)]})
            op(g, "slice", [flat], %{"start" => [0], "length" => [1]})

          a ->
            op(g, "slice", [nan], %{
              "start" => List.duplicate(0, length(dims)),
              "length" => List.replace_at(dims, a, 1)
            })
        end

      {g, first} = op(g, "reshape", [first], %{"shape" => Tuple.to_list(shape)})

      # Nx.BinaryBackend: a leading NaN wins; with tie_break :high each later
      # NaN ties with it, so the last NaN
      {g, at} =
        if attrs["tie_break"] == "high" do
          {g, n8} = op(g, "as_type", [nan], %{"dtype" => "u8"})
          op(g, "argmax", [n8], attrs)
        else
          scalar(g, 0, {:s, 32})
        end

      op(g, "select", [first, at, r])
    end

    def arg_reduce(g, op, x, _type, attrs, _in_shape, _axis, _shape), do: op(g, op, [x], attrs)

    def header(g, outputs, fetch \\ false) do
      %{
        "cmd" => "run",
        "keep" => not fetch,
        "fetch" => fetch,
        "graph" => %{
          "inputs" => {:object, Enum.reverse(g.inputs)},
          "ops" => Enum.reverse(g.ops),
          "outputs" => {:object, Enum.map(outputs, &{&1, true})}
        }
      }
    end

    def frame_bytes(g), do: g.bytes |> Enum.reverse() |> IO.iodata_to_binary()

    @doc """
    The same request as `header/3`, already JSON: `{:raw, "run", members}`
    for `Nxvk.Server.request/4` (the members after the id).  Value and op
    names are ours (no character to escape), so only numbers and attrs go
    through the encoder: the hot path of every native callback.
    """
    def raw_header(g, outputs) do
      {:raw, "run",
       [
         "\"cmd\":\"run\",\"keep\":true,\"fetch\":false,",
         early_member(),
         "\"graph\":",
         graph_json(g, outputs)
       ]}
    end

    @doc """
    `"early":true,` when runs that keep their outputs ask the port to reply
    before running (nxvk-port(7), run: the round trip overlaps the engine;
    a failure of the run is then answered by the outputs' handles, naming
    the op that failed, at their next use, as CUDA's asynchronous launches
    report errors at the next synchronisation).  On by default; off with
    `config :nxvk, early_reply: false` or NXVK_EARLY_REPLY=0 (the variable
    wins over the config).
    """
    def early_member do
      case :persistent_term.get({__MODULE__, :early}, nil) do
        nil ->
          on =
            case System.get_env("NXVK_EARLY_REPLY") do
              "0" -> false
              "1" -> true
              _ -> Application.get_env(:nxvk, :early_reply, true) != false
            end

          :persistent_term.put({__MODULE__, :early}, on)
          early_member()

        true ->
          "\"early\":true,"

        false ->
          ""
      end
    end

    @doc "The request that prepares this graph (its parameters from `param/1`): `{:raw, \"prepare\", members}`."
    def prepare_header(g, outputs),
      do: {:raw, "prepare", ["\"cmd\":\"prepare\",\"graph\":", graph_json(g, outputs)]}

    defp graph_json(g, outputs) do
      inputs =
        g.inputs
        |> Enum.reverse()
        |> Enum.map_intersperse(?,, fn
          {v, %{"handle" => h} = m} when map_size(m) == 1 ->
            [?", v, "\":{\"handle\":", Integer.to_string(h), ?}]

          {v, true} ->
            [?", v, "\":true"]

          {v, m} ->
            [?", v, "\":", Nxvk.JSON.encode!(m)]
        end)

      ops =
        g.ops
        |> Enum.reverse()
        |> Enum.map_intersperse(?,, fn %{"op" => op, "in" => ins, "out" => out} = node ->
          attrs = if a = node["attrs"], do: [",\"attrs\":", Nxvk.JSON.encode!(a)], else: []
          ins = Enum.map_intersperse(ins, ?,, &[?", &1, ?"])
          ["{\"op\":\"", op, "\",\"in\":[", ins, "],\"out\":\"", out, ?", attrs, ?}]
        end)

      outs = Enum.map_intersperse(outputs, ?,, &[?", &1, "\":true"])

      ["{\"inputs\":{", inputs, "},\"ops\":[", ops, "],\"outputs\":{", outs, "}}"]
    end

    @doc """
    Runs the graph, keeping `outputs` (value names) on the device.  Returns
    `{:ok, [%{"dtype", "shape", "handle", :ref}]}` in order, or the port's error.
    """
    def run(g, outputs) do
      # a graph input may name an output directly; the port keeps that
      header =
        case prepared(g, outputs) do
          nil ->
            raw_header(g, outputs)

          id ->
            exec_header(
              id,
              g.inputs |> Enum.reverse() |> Enum.map(fn {_, %{"handle" => h}} -> h end)
            )
        end

      request_outputs(g.server, header, Enum.reverse(g.bytes))
    end

    @doc """
    Sends a run or exec `header` (with `bytes`) and returns its kept outputs,
    each with the GC reference that frees its handle, as `run/2` does.
    """
    def request_outputs(server, header, bytes) do
      case Nxvk.Server.request(server, header, bytes, gc: true) do
        {:ok, reply, _} ->
          refs = reply[:gc] || %{}
          {:ok, Enum.map(reply["outputs"], &Map.put(&1, :ref, refs[&1["handle"]]))}

        error ->
          error
      end
    end

    @max_prepared 4096

    # A graph whose inputs are all handles (every native callback on
    # resident tensors) is prepared in the port the first time its shape of
    # ops is seen (nxvk-port(7), prepare; the dtypes and shapes come from the
    # inputs at each exec), then run by number: the port parses no graph.
    # Keyed by the ops, input names and outputs, per server; at most
    # #{@max_prepared} graphs per node, then the rest run as before.  Off
    # with NXVK_PREPARE=0 or `config :nxvk, prepare: false`.
    defp prepared(%{bytes: []} = g, outputs) do
      if prepare?() and Enum.all?(g.inputs, &match?({_, %{"handle" => _}}, &1)) do
        names = Enum.map(g.inputs, &elem(&1, 0))
        key = {:backend_prepared, g.server, g.ops, names, outputs}
        tab = Nxvk.Compiler.table()

        case :ets.lookup(tab, key) do
          [{_, id}] ->
            id

          [] ->
            if :ets.info(tab, :size) < @max_prepared do
              params = %{g | inputs: Enum.map(g.inputs, fn {v, _} -> {v, true} end)}

              id =
                case Nxvk.Server.request(g.server, prepare_header(params, outputs)) do
                  {:ok, %{"graph" => id}, _} -> id
                  _ -> nil
                end

              :ets.insert(tab, {key, id})
              id
            end
        end
      end
    end

    defp prepared(_g, _outputs), do: nil

    @doc "Whether graphs are prepared in the port (NXVK_PREPARE, `config :nxvk, prepare:`)."
    def prepare? do
      case :persistent_term.get({__MODULE__, :prepare}, nil) do
        nil ->
          on =
            System.get_env("NXVK_PREPARE") != "0" and
              Application.get_env(:nxvk, :prepare, true) != false

          :persistent_term.put({__MODULE__, :prepare}, on)
          on

        on ->
          on
      end
    end

    @doc "An exec of prepared graph `id` on `handles` (its parameters in order)."
    def exec_header(id, handles) do
      {:raw, "exec",
       [
         "\"cmd\":\"exec\",",
         early_member(),
         "\"graph\":",
         Integer.to_string(id),
         ",\"in\":[",
         Enum.map_intersperse(handles, ?,, &Integer.to_string/1),
         ?]
       ]}
    end
  end
end
