/*
 * costmath.js -- the client mirror of costdash's operating-condition arithmetic.
 *
 * The browser repeats a little of the core's cost arithmetic so that a slider never waits for the
 * server. This file is the ONLY place it does; every line mirrors a Python function:
 *
 *   logSlope, conditions   costdash.conditions.OperatingCondition (log_slope, slope, pc,
 *                          one_minus_pc, cost_scale), computed through log m like the core, so
 *                          p(+) = 1e-6 and cost ratios of 1e9 keep full precision
 *   normalizedCost         OperatingCondition.normalized_cost: NE = (1 - TPR) PC + FPR (1 - PC)
 *   expectedCost           OperatingCondition.expected_cost: NE (p C(-|+) + (1 - p) C(+|-)) plus
 *                          the constant part p C(+|+) + (1 - p) C(-|-) (costs as differences)
 *   optimalIndex           costdash.hull.optimal_vertex: the first hull vertex whose outgoing
 *                          edge is flatter than the iso-performance slope, compared on logs
 *   trivialCost            OperatingCondition.trivial_normalized_cost: min(PC, 1 - PC)
 *   trivialMoney           OperatingCondition.trivial_expected_cost: the better trivial
 *                          classifier's expected cost per case, constant part included
 *   savingMoney            OperatingCondition.saving_money: (min(PC, 1 - PC) - NE) x the scale
 *   saving                 OperatingCondition.saving_vs_trivial: savingMoney / trivialMoney
 *                          (NaN when the trivial choice costs nothing or gains)
 *   expectedCounts         OperatingCondition.expected_counts: (TP, FN, FP, TN) per volume
 *   extraCost              expected cost at one ROC point minus at another (a fixed threshold
 *                          or a constraint against the best choice), per case
 *   pointMetrics           costdash.pinned.point_metrics: a pinned threshold's expected counts,
 *                          precision and NPV at the conditions' p(+), recall, specificity, F1,
 *                          expected cost and regret against the best choice
 *   costInterval           costdash.readout_intervals.cost_interval: a threshold's expected cost
 *                          with its Clopper-Pearson-MOVER interval at PC(+) (gammaPInv mirrors
 *                          scipy.special.gammaincinv for the gamma lower limit)
 *   regretInterval         costdash.readout_intervals.regret_interval: a pin's regret with its
 *                          discordant-pair MOVER interval at PC(+)
 *
 * Rare-event axes (dashboard/figures/axes.py; drawing coordinates, not cost arithmetic, but
 * arithmetic all the same, so it lives here and is tested against the Python in Node):
 *
 *   logOdds, logOddsOf     axes.log_odds: log10 PC(+)/(1 - PC(+)), clamped to +-LOG_ODDS_LIMIT;
 *                          of conditions through their log slope (log odds = -ln m / ln 10),
 *                          exact however small PC(+) is
 *   fprFloor, logFpr       axes.fpr_floor, axes.log_fpr: log10 FPR, 0 drawn at half the
 *                          smallest non-zero FPR
 *   pcSamples, fprSamples  axes.pc_samples, axes.fpr_samples: where a straight line of the linear
 *                          axes is sampled to draw it as the curve it is on a log axis
 *   zoomRange              an interval of a given half-width around x, moved inside [lo, hi]
 *
 * The hull vertices and the logs of their edge slopes come from the server (view model), computed
 * by the core; +-1e308 stands for an infinite log slope. tests/web/test_e2e_explore.py checks that
 * the readouts computed here equal the Python core's values.
 */
(function () {
    "use strict";

    /** 1 / (1 + exp(x)) without overflow (conditions._expit_neg). */
    function expitNeg(x) {
        if (x >= 0) {
            const e = Math.exp(-x);
            return e / (1 + e);
        }
        return 1 / (1 + Math.exp(x));
    }

    /** Natural log of m = p(-) C(+|-) / (p(+) C(-|+)), same operation order as the core. */
    function logSlope(p, costFn, costFp) {
        return Math.log1p(-p) + Math.log(costFp) - Math.log(p) - Math.log(costFn);
    }

    /** Whether (p, C(-|+), C(+|-), C(+|+), C(-|-)) are valid conditions
     * (OperatingCondition.__post_init__); the last two default to 0. */
    function valid(p, costFn, costFp, costTp, costTn) {
        const num = (v) => typeof v === "number" && Number.isFinite(v);
        const tp = costTp === undefined || costTp === null ? 0 : costTp;
        const tn = costTn === undefined || costTn === null ? 0 : costTn;
        return num(p) && p > 0 && p < 1 && num(costFn) && costFn > 0 && num(costFp) &&
            costFp > 0 && num(tp) && num(tn) && costFn - tp > 0 && costFp - tn > 0;
    }

    /** Everything OperatingCondition derives from (p, C(-|+), C(+|-), C(+|+), C(-|-)): the slope,
     * PC(+) and the scale use the differences C(-|+) - C(+|+) and C(+|-) - C(-|-); `constant` is
     * p C(+|+) + (1 - p) C(-|-), the part of the cost no decision changes. */
    function conditions(p, costFn, costFp, costTp, costTn) {
        const tp = costTp || 0, tn = costTn || 0;
        const fnDiff = costFn - tp, fpDiff = costFp - tn;
        const lm = logSlope(p, fnDiff, fpDiff);
        return {
            p: p, costFn: costFn, costFp: costFp, costTp: tp, costTn: tn,
            logSlope: lm,
            slope: Math.exp(lm),              // Infinity past float range, like the core
            pc: expitNeg(lm),
            oneMinusPc: expitNeg(-lm),
            costScale: p * fnDiff + (1 - p) * fpDiff,
            constant: p * tp + (1 - p) * tn,
        };
    }

    function normalizedCost(c, fpr, tpr) {
        return (1 - tpr) * c.pc + fpr * c.oneMinusPc;
    }

    function expectedCost(c, ne) {
        return ne * c.costScale + c.constant;
    }

    /**
     * Index of the optimal hull vertex: the count of edges whose log slope exceeds log m.
     *
     * An edge whose slope equals m is a tie (both ends are optimal) and, as in the core, the
     * vertex with the lower FPR is taken. Ties are common (p(+) at the data's prevalence with
     * equal costs makes m = N/P, the slope of every diagonal step), so "equal" means within
     * `tie` in log slope: costdash.hull.SAME_LOG_SLOPE, sent by the server with the hull so the
     * tolerance lives in one place.
     */
    function optimalIndex(logEdges, logM, tie) {
        const bound = logM + tie;
        let k = 0;
        for (let i = 0; i < logEdges.length; i++) {
            if (logEdges[i] > bound) k++;
        }
        return k;
    }

    /** The better trivial classifier: flagging nothing costs PC, flagging everything 1 - PC. */
    function trivialCost(c) {
        return Math.min(c.pc, c.oneMinusPc);
    }

    function trivialMoney(c) {
        return expectedCost(c, trivialCost(c));
    }

    function savingMoney(c, ne) {
        return (trivialCost(c) - ne) * c.costScale;
    }

    /** The saving as a share of the money the trivial choice costs, so that the percentage
     * matches the money beside it (the constant part of correct decisions included). */
    function saving(c, ne) {
        const t = trivialMoney(c);
        return t > 0 ? savingMoney(c, ne) / t : NaN;
    }

    function expectedCounts(c, fpr, tpr, volume) {
        const pos = c.p * volume, neg = (1 - c.p) * volume;
        return [tpr * pos, (1 - tpr) * pos, fpr * neg, (1 - fpr) * neg];
    }

    /** Expected cost per case at (fpr, tpr) minus at (baseFpr, baseTpr). */
    function extraCost(c, fpr, tpr, baseFpr, baseTpr) {
        return expectedCost(c, normalizedCost(c, fpr, tpr)) -
            expectedCost(c, normalizedCost(c, baseFpr, baseTpr));
    }

    const ratio = (a, b) => (b > 0 ? a / b : NaN);

    /**
     * The ROC point (fpr, tpr) priced at conditions `c` against the best choice (bestFpr,
     * bestTpr), with expected counts among `volume` cases (point_metrics; NaN where the core
     * has NaN: precision with nothing flagged, NPV with everything flagged, the regret's share
     * when the best choice costs nothing or less).
     */
    function pointMetrics(c, fpr, tpr, bestFpr, bestTpr, volume) {
        const p = c.p, q = 1 - p;
        const tp = tpr * p, fn = (1 - tpr) * p, fp = fpr * q, tn = (1 - fpr) * q;
        const ne = normalizedCost(c, fpr, tpr);
        const cost = expectedCost(c, ne);
        const neBest = normalizedCost(c, bestFpr, bestTpr);
        const bestCost = expectedCost(c, neBest);
        const regret = (ne - neBest) * c.costScale;
        return {
            tp: tp * volume, fn: fn * volume, fp: fp * volume, tn: tn * volume,
            precision: ratio(tp, tp + fp), recall: tpr, specificity: 1 - fpr,
            npv: ratio(tn, tn + fn), f1: ratio(2 * tp, 2 * tp + fp + fn),
            normalizedCost: ne, expectedCost: cost, periodCost: cost * volume,
            regret: regret, periodRegret: regret * volume,
            regretShare: bestCost > 0 ? ratio(regret, bestCost) : NaN,
        };
    }

    // --- rare-event axes (dashboard/figures/axes.py) -------------------------------------------

    const LOG_ODDS_LIMIT = 8;
    const CURVE_STEP = 0.05;
    const clampOdds = (x) => (Number.isNaN(x) ? 0 : Math.min(Math.max(x, -LOG_ODDS_LIMIT),
                                                               LOG_ODDS_LIMIT));

    /** log10 of the odds PC(+) / (1 - PC(+)), clamped (axes.log_odds). */
    function logOdds(pc) {
        return clampOdds((Math.log(pc) - Math.log1p(-pc)) / Math.LN10);
    }

    /** The log odds of the conditions' PC(+): PC(+) / (1 - PC(+)) = 1 / m. */
    function logOddsOf(c) {
        return clampOdds(-c.logSlope / Math.LN10);
    }

    function pcOfLogOdds(x) {
        return 1 / (1 + Math.pow(10, -x));
    }

    function fprFloor(nNeg) {
        return 0.5 / Math.max(Math.floor(nNeg), 1);
    }

    function logFpr(fpr, floor) {
        return Math.log10(Math.max(fpr, floor));
    }

    /** PC(+) from lo to hi (both kept exactly), evenly spaced by `step` decades of odds. */
    function pcSamples(lo, hi, step) {
        step = step || CURVE_STEP;
        const a = logOdds(lo), b = logOdds(hi);
        const n = Math.max(2, Math.ceil((b - a) / step) + 1);
        const out = [lo];
        for (let k = 1; k < n - 1; k++) out.push(pcOfLogOdds(a + (b - a) * k / (n - 1)));
        out.push(hi);
        return out;
    }

    /** FPR from f0 to f1 (both kept exactly), evenly spaced on the log FPR axis
     * (axes.fpr_samples). */
    function fprSamples(f0, f1, floor, step) {
        step = step || CURVE_STEP;
        const a = Math.max(f0, floor), b = Math.max(f1, floor);
        if (!(b > a)) return [f0, f1];
        const la = Math.log10(a), lb = Math.log10(b);
        const n = Math.max(2, Math.ceil((lb - la) / step) + 1);
        const out = [f0];
        for (let k = 1; k < n - 1; k++) out.push(Math.pow(10, la + (lb - la) * k / (n - 1)));
        out.push(f1);
        return out;
    }

    /** [x - half, x + half], moved (not shrunk) to lie in [lo, hi]; [lo, hi] if it is wider. */
    function zoomRange(x, half, lo, hi) {
        if (!(2 * half < hi - lo)) return [lo, hi];
        let a = x - half, b = x + half;
        if (a < lo) { b += lo - a; a = lo; }
        if (b > hi) { a -= b - hi; b = hi; }
        return [a, b];
    }

    // --- intervals beside the headline numbers (costdash/readout_intervals.py) ----------------
    //
    // The server sends each threshold's condition-free limits (Clopper-Pearson limits of its
    // error rates, or the discordant-pair limits of a pin against a hull vertex); these combine
    // them at the current PC(+) exactly as the core does, so the interval moves with a slider.

    /** ln Gamma(x), x > 0 (Lanczos, Numerical Recipes 3rd ed. gammln: ~1e-15 relative). */
    const LANCZOS = [57.1562356658629235, -59.5979603554754912, 14.1360979747417471,
        -0.491913816097620199, 0.339946499848118887e-4, 0.465236289270485756e-4,
        -0.983744753048795646e-4, 0.158088703224912494e-3, -0.210264441724104883e-3,
        0.217439618115212643e-3, -0.164318106536763890e-3, 0.844182239838527433e-4,
        -0.261908384015814087e-4, 0.368991826595316234e-5];

    function lnGamma(x) {
        let y = x;
        const tmp0 = x + 5.24218750000000000;
        const tmp = (x + 0.5) * Math.log(tmp0) - tmp0;
        let ser = 0.999999999999997092;
        for (let j = 0; j < 14; j++) ser += LANCZOS[j] / ++y;
        return tmp + Math.log(2.5066282746310005 * ser / x);
    }

    /** The regularized lower incomplete gamma P(a, x): series below a + 1, else the continued
     * fraction of Q (Lentz); both converge in O(sqrt(a)) terms. */
    function gammaP(a, x) {
        if (x <= 0) return 0;
        const front = -x + a * Math.log(x) - lnGamma(a);
        if (x < a + 1) {
            let ap = a, del = 1 / a, sum = del;
            for (let n = 0; n < 1e6; n++) {
                ap += 1;
                del *= x / ap;
                sum += del;
                if (Math.abs(del) < Math.abs(sum) * 1e-16) break;
            }
            return sum * Math.exp(front);
        }
        const tiny = 1e-300;
        let b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
        for (let i = 1; i < 1e6; i++) {
            const an = -i * (i - a);
            b += 2;
            d = an * d + b;
            if (Math.abs(d) < tiny) d = tiny;
            c = b + an / c;
            if (Math.abs(c) < tiny) c = tiny;
            d = 1 / d;
            const del = d * c;
            h *= del;
            if (Math.abs(del - 1) < 1e-16) break;
        }
        return 1 - Math.exp(front) * h;
    }

    /** x with P(a, x) = p (scipy.special.gammaincinv): Halley steps from Numerical Recipes'
     * starting point (invgammp), to a relative 1e-12. */
    function gammaPInv(a, p) {
        if (p <= 0) return 0;
        const a1 = a - 1, gln = lnGamma(a);
        let x, lna1 = 0, afac = 0;
        if (a > 1) {
            lna1 = Math.log(a1);
            afac = Math.exp(a1 * (lna1 - 1) - gln);
            const pp = p < 0.5 ? p : 1 - p;
            const t = Math.sqrt(-2 * Math.log(pp));
            let z = (2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t;
            if (p < 0.5) z = -z;
            x = Math.max(1e-3, a * Math.pow(1 - 1 / (9 * a) - z / (3 * Math.sqrt(a)), 3));
        } else {
            const t = 1 - a * (0.253 + a * 0.12);
            x = p < t ? Math.pow(p / t, 1 / a) : 1 - Math.log(1 - (p - t) / (1 - t));
        }
        for (let j = 0; j < 100; j++) {
            if (x <= 0) return 0;
            const err = gammaP(a, x) - p;
            const dens = a > 1 ? afac * Math.exp(-(x - a1) + a1 * (Math.log(x) - lna1))
                : Math.exp(-x + a1 * Math.log(x) - gln);
            const u = err / dens;
            const step = u / (1 - 0.5 * Math.min(1, u * ((a - 1) / x - 1)));
            x -= step;
            if (x <= 0) x = 0.5 * (x + step);
            if (Math.abs(step) < 1e-12 * x) break;
        }
        return x;
    }

    /** Fay & Feuer's gamma lower limit of a weighted count (_intervals.gamma_lower). */
    function gammaLower(y, v, level) {
        if (!(y > 0)) return 0;
        if (!(v > 0)) return y;
        return gammaPInv(y * y / v, (1 - level) / 2) * (v / y);
    }

    /**
     * A threshold's expected cost per case at conditions `c` with its interval
     * (readout_intervals.cost_interval: the Clopper-Pearson-MOVER band of its cost line at PC(+),
     * the lower limit no higher than the gamma limit). `lim`: the server's rate limits
     * ({fn, n_pos, fp, n_neg, level, exact, fnr_low, fnr_high, fpr_low, fpr_high}).
     */
    function costInterval(c, lim) {
        const x = c.pc, w = 1 - x;
        const p1 = lim.fn / lim.n_pos, p2 = lim.fp / lim.n_neg;
        const ne = p1 * x + p2 * w;
        let low = ne - Math.hypot(x * (p1 - lim.fnr_low), w * (p2 - lim.fpr_low));
        const high = ne + Math.hypot(x * (lim.fnr_high - p1), w * (lim.fpr_high - p2));
        const v = lim.exact ? 0 : x * x * p1 * (1 - p1) / lim.n_pos +
            w * w * p2 * (1 - p2) / lim.n_neg;
        low = Math.min(low, gammaLower(ne, v, lim.level));
        return {cost: expectedCost(c, ne), low: expectedCost(c, low), high: expectedCost(c, high)};
    }

    /** A pin's regret per case against the best choice with its interval
     * (readout_intervals.regret_interval): `lim` the paired limits {d_fnr, fnr_low, fnr_high,
     * d_fpr, fpr_low, fpr_high} of the pin against the chosen hull vertex. */
    function regretInterval(c, lim) {
        const x = c.pc, w = 1 - x;
        const d = x * lim.d_fnr + w * lim.d_fpr;
        const low = d - Math.hypot(x * (lim.d_fnr - lim.fnr_low), w * (lim.d_fpr - lim.fpr_low));
        const high = d + Math.hypot(x * (lim.fnr_high - lim.d_fnr), w * (lim.fpr_high - lim.d_fpr));
        return {regret: d * c.costScale, low: low * c.costScale, high: high * c.costScale};
    }

    window.costdashMath = {
        expitNeg, logSlope, valid, conditions, normalizedCost, expectedCost, optimalIndex,
        trivialCost, trivialMoney, savingMoney, saving, expectedCounts, extraCost, pointMetrics,
        LOG_ODDS_LIMIT, logOdds, logOddsOf, pcOfLogOdds, fprFloor, logFpr, pcSamples, fprSamples,
        zoomRange, lnGamma, gammaP, gammaPInv, gammaLower, costInterval, regretInterval,
    };
})();
