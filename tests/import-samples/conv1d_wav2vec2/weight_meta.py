class Program_weight_tensor_meta_in_0:
	name = "in_0"
	original_name = "in_0"
	shape = [2, 1, 400]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 1.0
	data = None


class Program_weight_tensor_meta_in_1:
	name = "in_1"
	original_name = "in_1"
	shape = [16, 1, 10]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 0.5
	data = None


class Program_weight_tensor_meta_in_2:
	name = "in_2"
	original_name = "in_2"
	shape = [16, 4, 3]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 0.5
	data = None


class Program_weight_tensor_meta_in_3:
	name = "in_3"
	original_name = "in_3"
	shape = [16]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 0.5
	data = None


class Program_weight_tensor_meta_in_4:
	name = "in_4"
	original_name = "in_4"
	shape = [8, 16, 3]
	dtype = "torch.float32"
	device = "cuda:0"
	mean = 0.0
	std = 0.5
	data = None


